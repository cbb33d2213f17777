import { createHash } from 'node:crypto';
import type { ProjectEntity } from './project.entity.js';
import { ACCENT_COLOR, logoImageSource, logoUrlProblem, textColourOn } from './project-branding.js';

// The frame of every page Patchbay shows a project's end users (connect links, the OAuth 2.0 callback, MCP
// sign-in and consent), in the project's branding: the stylesheet, the headers, the result pages.

/** An HTML answer of an end-user page, decided by a service and written as is by its controller. */
export interface PageResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

export const STYLESHEET_PATH = '/connect/assets/connect.css';

/** Served by Patchbay itself: the page loads nothing from anywhere else. */
export const STYLESHEET = `*{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1c1f24;background:#eef1f5;line-height:1.5}
body{margin:0;padding:1rem}
main{max-width:30rem;margin:2rem auto;background:#fff;border-radius:.75rem;box-shadow:0 1px 4px rgba(0,0,0,.12);padding:1.5rem;border-top:4px solid var(--accent,#1a5fd0)}
h1{font-size:1.4rem;margin:0 0 .5rem}
.brand{display:flex;gap:.5rem;align-items:center;font-weight:600;margin:0 0 1rem;overflow-wrap:anywhere}
.brand img{width:2rem;height:2rem;object-fit:contain;border-radius:.375rem;flex:none}
.app{display:flex;gap:.75rem;align-items:center;margin-bottom:1rem}
.app img{width:3rem;height:3rem;border-radius:.5rem}
.description{color:#4a5260;margin:0 0 1rem}
.request{background:#f5f7fa;border-radius:.5rem;padding:.75rem;margin:0 0 1rem;overflow-wrap:anywhere}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=password]{width:100%;font:inherit;padding:.6rem;border:1px solid #8a93a3;border-radius:.4rem}
input[aria-invalid=true]{border:2px solid #b3261e}
.field-error{color:#9c1f17;font-size:.875rem;margin:.25rem 0 0}
.hint{font-size:.875rem;color:#4a5260;margin:.25rem 0 0}
input:focus,button:focus,a:focus{outline:3px solid #1a5fd0;outline-offset:2px}
button,a.button{display:block;margin-top:1.25rem;width:100%;font:inherit;font-weight:600;padding:.7rem;border:0;border-radius:.4rem;background:var(--accent,#1a5fd0);color:var(--accent-text,#fff);cursor:pointer;text-align:center;text-decoration:none}
button:hover,a.button:hover{filter:brightness(.9)}
button.secondary{margin-top:.5rem;background:#fff;color:#1a5fd0;border:1px solid #1a5fd0}
button.secondary:hover{background:#eef3fc;filter:none}
h2{font-size:1rem;margin:1rem 0 .25rem}
ul{margin:.25rem 0 .75rem;padding-left:1.25rem}
code{font-size:.875rem;overflow-wrap:anywhere}
.uri{word-break:break-all}
.error{border-left:4px solid #b3261e;background:#fdecea;color:#6d1a14;padding:.6rem .75rem;border-radius:.25rem}
.success{border-left:4px solid #1e7a3c;background:#e7f5ec;color:#12462a;padding:.6rem .75rem;border-radius:.25rem}
.note{font-size:.875rem;color:#4a5260;margin-top:1rem}
a{color:#1a5fd0}
`;

/** The developer's app, as the end-user pages show it (the project's branding). */
export interface Brand {
  /** The project's display name, else its name. */
  name: string;
  /** An https or data:image URL that passed the project's rules (project-branding.ts). */
  logo: string | null;
  /** #rrggbb. */
  accent: string | null;
  /** Where "Back to …" leads on a result page; null: no such link. */
  backUrl: string | null;
}

/** The branding of a project; `backUrl` (a link's or a flow's own return address) wins over its home URL. */
export function brandOf(project: ProjectEntity, backUrl?: string | null): Brand {
  return {
    name: project.display_name || project.name,
    logo: project.logo_url && logoUrlProblem(project.logo_url) === null ? project.logo_url : null,
    accent: project.accent_color && ACCENT_COLOR.test(project.accent_color) ? project.accent_color : null,
    backUrl: backUrl || project.home_url || null,
  };
}

export function successPage(appDisplayName: string, brand?: Brand): PageResponse {
  return html(
    200,
    'Account linked',
    `<h1>Account linked</h1>
<p class="success" role="status">Your ${escapeHtml(appDisplayName)} account is now linked.${brand?.backUrl ? '' : ' You can close this window.'}</p>
${backLink(brand)}`,
    [],
    brand,
  );
}

export function messagePage(
  status: number,
  title: string,
  message: string,
  brand?: Brand,
  note?: string,
): PageResponse {
  return html(
    status,
    title,
    `<h1>${escapeHtml(title)}</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>
${note ? `<p class="note">${escapeHtml(note)}</p>` : ''}
${backLink(brand)}`,
    [],
    brand,
  );
}

/** "Back to <the developer's app>", on every result page that knows where that is. */
export function backLink(brand: Brand | undefined): string {
  return brand?.backUrl
    ? `<a class="button" href="${escapeHtml(brand.backUrl)}">Back to ${escapeHtml(brand.name)}</a>`
    : '';
}

/** 303 (a POST answered with a GET elsewhere); `location` is ours or an allow-listed origin. */
export function seeOther(location: string, extraHeaders: Record<string, string> = {}): PageResponse {
  return { status: 303, headers: { ...PRIVATE_HEADERS, ...extraHeaders, location } };
}

/** Nothing of an end-user page may be cached, framed, or leak its address as a referrer. */
export const PRIVATE_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

/**
 * An end-user page of Patchbay (connect links, MCP sign-in and consent): no script, Patchbay's own
 * stylesheet, and a CSP whose form-action lists only the origins a post of the page may end on.
 */
export function html(
  status: number,
  title: string,
  content: string,
  formTargets: string[] = [],
  brand?: Brand,
): PageResponse {
  const formAction = ["'self'", ...new Set(formTargets)].join(' ');
  // The accent colour is the page's only inline style, allowed by its hash (a nonce would differ per answer for
  // nothing: the text is fixed by the colour); the project's logo is the only image source added, by its address.
  const inlineStyle = brand?.accent
    ? `:root{--accent:${brand.accent};--accent-text:${textColourOn(brand.accent)}}`
    : '';
  const styleSrc = inlineStyle ? `'self' '${styleHash(inlineStyle)}'` : "'self'";
  const imgSrc = ['data:', ...(brand?.logo ? [logoImageSource(brand.logo)] : [])];
  const header = brand
    ? `<header class="brand">${brand.logo ? `<img src="${escapeHtml(brand.logo)}" alt="">` : ''}<span>${escapeHtml(brand.name)}</span></header>\n`
    : '';
  return {
    status,
    headers: {
      ...PRIVATE_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy':
        `default-src 'none'; style-src ${styleSrc}; img-src ${[...new Set(imgSrc)].join(' ')}; ` +
        `form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    },
    body: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Patchbay</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${inlineStyle ? `<style>${inlineStyle}</style>\n` : ''}</head>
<body>
<main>
${header}${content}
</main>
</body>
</html>
`,
  };
}

function styleHash(text: string): string {
  return `sha256-${createHash('sha256').update(text).digest('base64')}`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
