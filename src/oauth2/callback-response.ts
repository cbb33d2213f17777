import type { DomainError } from '../../libs/common/src/index.js';
import { type Brand, messagePage, successPage } from '../projects/end-user-page.js';
import type { LinkedAccountPublic } from '../linked-accounts/linked-accounts.dto.js';
import { plainProviderError } from './provider-errors.js';

/** The callback's HTTP answer, decided by the service and written as is by the controller. */
export interface CallbackResponse {
  status: number;
  headers: Record<string, string>;
  body?: string;
}

/** What a page of the callback shows besides the outcome: the linked app's name and the developer's branding. */
export interface CallbackPageContext {
  appDisplayName: string;
  brand?: Brand;
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
  page: CallbackPageContext | null,
): CallbackResponse {
  if (redirectUrl) {
    return redirect(redirectUrl, { linked_account_id: account.id, status: 'success' });
  }
  if (page) {
    return successPage(page.appDisplayName, page.brand);
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
  page: CallbackPageContext | null,
): CallbackResponse {
  if (redirectUrl) {
    return redirect(redirectUrl, {
      status: 'error',
      error: error.code ?? 'server_error',
      error_description: error.message,
    });
  }
  if (page) {
    // Plain words first; the technical message (with the provider's own text, escaped) only as a reference.
    return messagePage(
      error.status,
      'Linking failed',
      plainProviderError(error.code ?? 'server_error', page.appDisplayName),
      page.brand,
      `Details for support: ${error.message}`,
    );
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
