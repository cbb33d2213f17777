import type { SecurityScheme } from '../apps/security-scheme.js';
import { type Brand, escapeHtml, html, type PageResponse } from '../projects/end-user-page.js';

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
