import type { DomainError } from '../../libs/common/src/index.js';
import type { LinkedAccountPublic } from '../linked-accounts/linked-accounts.dto.js';

/** The callback's HTTP answer, decided by the service and written as is by the controller. */
export interface CallbackResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** Whether the requester (a browser landing on the callback) prefers a page over JSON. */
export function prefersHtml(accept: string | undefined): boolean {
  return (accept ?? '').toLowerCase().includes('text/html');
}

/** The callback URL carries an authorization code: nothing of it may be cached or leak as a referrer. */
const PRIVATE_HEADERS = { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

export function linkedResponse(
  account: LinkedAccountPublic,
  redirectUrl: string | null,
  html: boolean,
): CallbackResponse {
  if (redirectUrl) {
    return redirect(redirectUrl, { linked_account_id: account.id, status: 'success' });
  }
  if (html) {
    return page(200, 'Account linked', `Your ${account.app_name} account is now linked. You can close this window.`);
  }
  return {
    status: 200,
    headers: { ...PRIVATE_HEADERS, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(account),
  };
}

export function failedResponse(
  error: DomainError & { code?: string },
  redirectUrl: string | null,
  html: boolean,
): CallbackResponse {
  if (redirectUrl) {
    return redirect(redirectUrl, {
      status: 'error',
      error: error.code ?? 'server_error',
      error_description: error.message,
    });
  }
  if (html) {
    return page(error.status, 'Linking failed', error.message);
  }
  return {
    status: error.status,
    headers: { ...PRIVATE_HEADERS, 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ error: error.message }),
  };
}

/** 302 to the caller's page (its origin was checked at start) with the outcome appended to its query. */
function redirect(target: string, outcome: Record<string, string>): CallbackResponse {
  const url = new URL(target);
  for (const [key, value] of Object.entries(outcome)) {
    url.searchParams.set(key, value);
  }
  return { status: 302, headers: { ...PRIVATE_HEADERS, location: url.href } };
}

function page(status: number, title: string, message: string): CallbackResponse {
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(message)}</p>
</body>
</html>
`;
  return {
    status,
    headers: {
      ...PRIVATE_HEADERS,
      'content-type': 'text/html; charset=utf-8',
      // The page shows text only: no script, frame or outside resource may ever run in it.
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    },
    body,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
