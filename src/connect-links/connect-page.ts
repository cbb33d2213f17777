import type { SecurityScheme } from '../apps/security-scheme.js';

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
main{max-width:30rem;margin:2rem auto;background:#fff;border-radius:.75rem;box-shadow:0 1px 4px rgba(0,0,0,.12);padding:1.5rem}
h1{font-size:1.4rem;margin:0 0 .5rem}
.app{display:flex;gap:.75rem;align-items:center;margin-bottom:1rem}
.app img{width:3rem;height:3rem;border-radius:.5rem}
.description{color:#4a5260;margin:0 0 1rem}
.request{background:#f5f7fa;border-radius:.5rem;padding:.75rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input[type=text],input[type=password]{width:100%;font:inherit;padding:.6rem;border:1px solid #8a93a3;border-radius:.4rem}
input:focus,button:focus{outline:3px solid #1a5fd0;outline-offset:2px}
button{margin-top:1.25rem;width:100%;font:inherit;font-weight:600;padding:.7rem;border:0;border-radius:.4rem;background:#1a5fd0;color:#fff;cursor:pointer}
button:hover{background:#144ca8}
button.secondary{margin-top:.5rem;background:#fff;color:#1a5fd0;border:1px solid #1a5fd0}
button.secondary:hover{background:#eef3fc}
h2{font-size:1rem;margin:1rem 0 .25rem}
ul{margin:.25rem 0 .75rem;padding-left:1.25rem}
.uri{word-break:break-all}
.error{border-left:4px solid #b3261e;background:#fdecea;color:#6d1a14;padding:.6rem .75rem;border-radius:.25rem}
.success{border-left:4px solid #1e7a3c;background:#e7f5ec;color:#12462a;padding:.6rem .75rem;border-radius:.25rem}
.note{font-size:.875rem;color:#4a5260;margin-top:1rem}
a{color:#1a5fd0}
`;

export interface LinkView {
  linkId: string;
  appDisplayName: string;
  appDescription: string;
  /** Shown only when the catalogue's logo is a data: URL (no third-party assets). */
  appLogo: string | null;
  projectName: string;
  ownerId: string;
  scheme: SecurityScheme;
  csrfToken: string;
  /**
   * Origins a form post of this page may end on besides Patchbay's own (CSP `form-action` also
   * governs redirects after a post): the OAuth 2.0 provider's authorization page, and the
   * developer's `after_link_redirect_url` once the account is linked.
   */
  formTargets: string[];
  error?: string;
}

/** The page of a usable link: what will be linked for whom, and the scheme's form. */
export function linkPage(view: LinkView, status = 200): PageResponse {
  const action = `/connect/${view.linkId}`;
  const hidden = `<input type="hidden" name="csrf_token" value="${escapeHtml(view.csrfToken)}">`;
  const error = view.error ? `<p class="error" role="alert">${escapeHtml(view.error)}</p>` : '';
  let form: string;
  switch (view.scheme) {
    case 'oauth2':
      form = `<form method="post" action="${action}/oauth2">${hidden}
<p>You will sign in at ${escapeHtml(view.appDisplayName)} and come back here.</p>
<button type="submit">Continue to ${escapeHtml(view.appDisplayName)}</button>
</form>`;
      break;
    case 'api_key':
      form = `<form method="post" action="${action}" autocomplete="off">${hidden}
${secretField('api_key', 'API key')}
<button type="submit">Link account</button>
</form>`;
      break;
    case 'http_basic':
      form = `<form method="post" action="${action}" autocomplete="off">${hidden}
<label for="username">User name</label>
<input type="text" id="username" name="username" required autocomplete="off" autocapitalize="none" spellcheck="false">
${secretField('password', 'Password')}
<button type="submit">Link account</button>
</form>`;
      break;
    case 'http_bearer':
      form = `<form method="post" action="${action}" autocomplete="off">${hidden}
${secretField('token', 'Token')}
<button type="submit">Link account</button>
</form>`;
      break;
    case 'no_auth':
      form = `<form method="post" action="${action}">${hidden}
<p>${escapeHtml(view.appDisplayName)} needs no credentials.</p>
<button type="submit">Confirm</button>
</form>`;
      break;
  }
  const logo = view.appLogo ? `<img src="${escapeHtml(view.appLogo)}" alt="">` : '';
  const body = `<div class="app">${logo}<h1>Link your ${escapeHtml(view.appDisplayName)} account</h1></div>
<p class="description">${escapeHtml(view.appDescription)}</p>
<p class="request"><strong>${escapeHtml(view.projectName)}</strong> asks to link a ${escapeHtml(view.appDisplayName)} account for <strong>${escapeHtml(view.ownerId)}</strong>.</p>
${error}
${form}
<p class="note">Your credentials are sent to Patchbay only, stored encrypted, and never shown again.</p>`;
  return html(status, `Link ${view.appDisplayName}`, body, view.formTargets);
}

export function successPage(appDisplayName: string): PageResponse {
  return html(
    200,
    'Account linked',
    `<h1>Account linked</h1>
<p class="success" role="status">Your ${escapeHtml(appDisplayName)} account is now linked. You can close this window.</p>`,
  );
}

export function messagePage(status: number, title: string, message: string): PageResponse {
  return html(
    status,
    title,
    `<h1>${escapeHtml(title)}</h1>
<p class="error" role="alert">${escapeHtml(message)}</p>`,
  );
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

function secretField(name: string, label: string): string {
  // autocomplete=off and no value: a secret is never offered by the browser nor echoed by the server.
  return `<label for="${name}">${label}</label>
<input type="password" id="${name}" name="${name}" required autocomplete="off" autocapitalize="none" spellcheck="false">`;
}

/**
 * An end-user page of Patchbay (connect links, MCP sign-in and consent): no script, Patchbay's own
 * stylesheet, and a CSP whose form-action lists only the origins a post of the page may end on.
 */
export function html(status: number, title: string, content: string, formTargets: string[] = []): PageResponse {
  const formAction = ["'self'", ...new Set(formTargets)].join(' ');
  return {
    status,
    headers: {
      ...PRIVATE_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy':
        `default-src 'none'; style-src 'self'; img-src data:; form-action ${formAction}; ` +
        "frame-ancestors 'none'; base-uri 'none'",
    },
    body: `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)} · Patchbay</title>
<link rel="stylesheet" href="${STYLESHEET_PATH}">
</head>
<body>
<main>
${content}
</main>
</body>
</html>
`,
  };
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
