import { createHash } from 'node:crypto';
import type { SecurityScheme } from '../apps/security-scheme.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { ACCENT_COLOR, logoImageSource, logoUrlProblem, textColourOn } from '../projects/project-branding.js';

/** An HTML answer of the connect page, decided by the service and written as is by the controller. */
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

/** One permission an OAuth 2.0 app asks for: the catalogue's plain words, or the scope itself. */
export interface ScopeView {
  scope: string;
  description: string | null;
}

/** A field of a form with the server's message about it. */
export type FieldErrors = Partial<Record<string, string>>;

export interface LinkView {
  linkId: string;
  brand: Brand;
  appDisplayName: string;
  appDescription: string;
  /** Shown only when the catalogue's logo is a data: URL (no third-party assets). */
  appLogo: string | null;
  /** The developer's name for the end user, else the owner id. */
  ownerName: string;
  scheme: SecurityScheme;
  /** OAuth 2.0: the scopes the authorization will ask for. */
  scopes: ScopeView[];
  /** Where to find the credentials, from the catalogue's scheme. */
  hint: string | null;
  hintUrl: string | null;
  csrfToken: string;
  /**
   * Origins a form post of this page may end on besides Patchbay's own (CSP `form-action` also
   * governs redirects after a post): the OAuth 2.0 provider's authorization page, and the
   * developer's `after_link_redirect_url` once the account is linked.
   */
  formTargets: string[];
  /** A message about the whole attempt (an OAuth 2.0 refusal). */
  error?: string;
  fieldErrors?: FieldErrors;
}

/** The page of a usable link: what will be linked for whom, and the scheme's form. */
export function linkPage(view: LinkView, status = 200): PageResponse {
  const action = `/connect/${view.linkId}`;
  const app = escapeHtml(view.appDisplayName);
  const hidden = `<input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">`;
  const error = view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : '';
  const errors = view.fieldErrors ?? {};
  const hint = view.hint ? hintText(view.hint, view.hintUrl, view.appDisplayName) : '';
  let form: string;
  switch (view.scheme) {
    case 'oauth2':
      form = `${scopeList(view)}<form method="post" action="${action}/oauth2">${hidden}
<p>You will sign in at ${app} and come back here.</p>
<button type="submit">Continue to ${app}</button>
</form>`;
      break;
    case 'api_key':
      form = credentialsForm(action, hidden, field('api_key', 'API key', 'password', errors, hint));
      break;
    case 'http_basic':
      form = credentialsForm(
        action,
        hidden,
        `${field('username', 'User name', 'text', errors, hint)}
${field('password', 'Password', 'password', errors, '')}`,
      );
      break;
    case 'http_bearer':
      form = credentialsForm(action, hidden, field('token', 'Token', 'password', errors, hint));
      break;
    case 'no_auth':
      form = `<form method="post" action="${action}">${hidden}
<p>${app} needs no credentials.</p>
<button type="submit">Confirm</button>
</form>`;
      break;
  }
  const logo = view.appLogo ? `<img src="${escapeHtml(view.appLogo)}" alt="">` : '';
  const body = `<div class="app">${logo}<h1>Link your ${app} account</h1></div>
<p class="description">${escapeHtml(view.appDescription)}</p>
<p class="request"><strong>${escapeHtml(view.brand.name)}</strong> asks to link ${withArticle(view.appDisplayName)} account for <strong>${escapeHtml(view.ownerName)}</strong>.</p>
${error}
${form}
<p class="note">Your credentials are sent to Patchbay only, stored encrypted, and never shown again.</p>`;
  return html(status, `Link ${view.appDisplayName}`, body, view.formTargets, view.brand);
}

/** The form of a scheme whose credentials the end user types: its fields, never autocompleted. */
function credentialsForm(action: string, hidden: string, fields: string): string {
  return `<form method="post" action="${action}" autocomplete="off">${hidden}
${fields}
<button type="submit">Link account</button>
</form>`;
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

/** "an Airtable", "a GitHub", "an SMS Gateway", "a Unicorn": the article by the sound of the first word. */
export function withArticle(name: string): string {
  return `${articleFor(name)} ${escapeHtml(name)}`;
}

export function articleFor(name: string): 'a' | 'an' {
  const word = name.trim().split(/[\s\-_./]/)[0] ?? '';
  if (word === '') {
    return 'a';
  }
  // An initialism is read letter by letter: "an HR", "an SMS", "a UPS".
  if (word.length > 1 && word === word.toUpperCase() && /^[A-Z]/.test(word)) {
    return 'AEFHILMNORSX'.includes(word[0]) ? 'an' : 'a';
  }
  const lower = word.toLowerCase();
  // Read as "eight", "eleven", "eighteen"; "hour", "honest", "heir" start with a vowel sound.
  if (/^(8|11|18)/.test(lower) || /^(hour|honest|honou?r|heir)/.test(lower)) {
    return 'an';
  }
  // A vowel letter sounding like a consonant: "a Unicorn", "a user", "a Euro", "a OneDrive".
  if (/^(uni|use|usa|usu|uti|ubi|ure|uro|eu|ewe|one)/.test(lower)) {
    return 'a';
  }
  return /^[aeiou]/.test(lower) ? 'an' : 'a';
}

function scopeList(view: LinkView): string {
  if (view.scopes.length === 0) {
    return '';
  }
  const items = view.scopes
    .map(({ scope, description }) =>
      description ? `<li>${escapeHtml(description)}</li>` : `<li><code>${escapeHtml(scope)}</code></li>`,
    )
    .join('');
  return `<h2>${escapeHtml(view.brand.name)} will be able to</h2>
<ul class="scopes">${items}</ul>`;
}

function hintText(hint: string, url: string | null, appName: string): string {
  const link = url
    ? ` <a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">Open it on ${escapeHtml(appName)}</a>`
    : '';
  return `<p class="hint" id="credentials-hint">${escapeHtml(hint)}${link}</p>`;
}

/**
 * A labelled input; with the server's message the input says it is invalid and points to the message
 * (`aria-invalid`, `aria-describedby`), as it points to the hint. A secret is never echoed: no value.
 */
function field(name: string, label: string, type: 'text' | 'password', errors: FieldErrors, hint: string): string {
  const message = errors[name];
  const describedBy = [message ? `${name}-error` : '', hint ? 'credentials-hint' : ''].filter(Boolean).join(' ');
  const attributes = [
    `type="${type}"`,
    `id="${name}"`,
    `name="${name}"`,
    'required',
    'autocomplete="off"',
    'autocapitalize="none"',
    'spellcheck="false"',
    message ? 'aria-invalid="true"' : '',
    describedBy ? `aria-describedby="${describedBy}"` : '',
  ].filter(Boolean);
  return `<label for="${name}">${label}</label>
<input ${attributes.join(' ')}>
${message ? `<p class="field-error" id="${name}-error">${escapeHtml(message)}</p>` : ''}${hint}`;
}

/** 303 (a POST answered with a GET elsewhere); `location` is ours or an allow-listed origin. */
export function seeOther(location: string, extraHeaders: Record<string, string> = {}): PageResponse {
  return { status: 303, headers: { ...PRIVATE_HEADERS, ...extraHeaders, location } };
}

/** Nothing of a connect page may be cached, framed, or leak its address as a referrer. */
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
