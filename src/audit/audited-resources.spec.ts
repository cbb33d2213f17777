import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, changedFields, resourceTypeOf, snapshotOf } from './audited-resources.js';

describe('audit snapshots', () => {
  it('keep only the allow-listed fields, nested ones by their path, dates as RFC 3339 text', () => {
    const row = {
      app_name: 'MAIL',
      security_scheme: 'oauth2',
      security_scheme_overrides: { oauth2: { client_id: 'id', client_secret: 'never', scope: 'a b' } },
      secrets: 'sealed',
      enabled: true,
      created_at: new Date('2026-06-03T00:00:00Z'),
    };
    expect(snapshotOf('app_configuration', row)).toEqual({
      app_name: 'MAIL',
      security_scheme: 'oauth2',
      security_scheme_overrides: { oauth2: { client_id: 'id', scope: 'a b' } },
      enabled: true,
    });
    expect(snapshotOf('api_key', { key_hash: 'h', key_prefix: 'pb_1234567', expires_at: row.created_at })).toEqual({
      expires_at: '2026-06-03T00:00:00.000Z',
    });
    expect(snapshotOf('linked_account', null)).toBeNull();
  });

  it('refuse an allow-listed field holding an object, whose members would not be checked', () => {
    expect(() => snapshotOf('linked_account', { app_name: { credentials: 'x' } })).toThrow(/full path/);
  });

  it('of an update keep only what changed', () => {
    expect(changedFields({ enabled: true, app_name: 'A', limit: 1 }, { enabled: false, app_name: 'A' })).toEqual({
      before: { enabled: true, limit: 1 },
      after: { enabled: false },
    });
  });

  it('name each action after its resource type', () => {
    expect(AUDIT_ACTIONS).toContain('linked_account.deleted');
    expect(resourceTypeOf('mcp_oauth_client.registered')).toBe('mcp_oauth_client');
  });
});
