import { describe, expect, it } from 'vitest';
import { html } from '../projects/end-user-page.js';
import { articleFor } from './connect-page.js';

describe('articleFor', () => {
  it.each([
    ['Airtable', 'an'],
    ['GitHub', 'a'],
    ['Acme CRM', 'an'],
    ['Outlook', 'an'],
    ['Google Calendar', 'a'],
    ['HubSpot', 'a'],
    ['SMS Gateway', 'an'],
    ['HR Cloud', 'an'],
    ['UPS', 'a'],
    ['Unicorn API', 'a'],
    ['Uber', 'an'],
    ['Eventbrite', 'an'],
    ['OneDrive', 'a'],
    ['8x8', 'an'],
    ['1Password', 'a'],
    ['', 'a'],
  ])('%s → %s', (name, article) => {
    expect(articleFor(name)).toBe(article);
  });
});

describe('html with a brand', () => {
  it('allows the accent colour by the hash of its inline style and the logo by its exact address', () => {
    const page = html(200, 'T', '<p>x</p>', [], {
      name: 'Acme',
      logo: 'https://cdn.example.com/brand/logo.png?v=2',
      accent: '#ffd60a',
      backUrl: null,
    });
    const csp = page.headers['content-security-policy'];
    expect(csp).toMatch(/style-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
    expect(csp).toContain('img-src data: https://cdn.example.com/brand/logo.png;');
    expect(csp).not.toContain('unsafe-inline');
    // A light accent gets dark text.
    expect(page.body).toContain('<style>:root{--accent:#ffd60a;--accent-text:#000000}</style>');
  });
});
