import { createHmac } from 'node:crypto';

/**
 * How the connect page tells its own posts from another site's: a CSRF token bound to the link's token, and the
 * browser's fetch metadata and Origin.
 */

/** What the controller reads from a browser request. */
export interface PageRequest {
  linkId: string;
  /** The link's token from its cookie. */
  cookieToken?: string;
  /** `Origin` and `Sec-Fetch-Site` request headers, and the origin the request was addressed to. */
  origin?: string;
  fetchSite?: string;
  requestOrigin: string;
}

/** Bound to the link's token, so only a page that was given the token can post (synchronizer token). */
export function csrfToken(token: string, linkId: string): string {
  return createHmac('sha256', token).update(`csrf:${linkId}`).digest('base64url');
}

/**
 * Fetch metadata and Origin, when the browser sends them, must say the post came from this site
 * (PUBLIC_BASE_URL or the address the request was sent to); the SameSite=Lax cookie and the CSRF
 * token cover browsers that send neither.
 */
export function isSameSite(request: PageRequest, publicBaseUrl: string): boolean {
  if (request.fetchSite && request.fetchSite !== 'same-origin') {
    return false;
  }
  // `Origin: null` is what a browser sends from a page with `Referrer-Policy: no-referrer` (ours): no information.
  if (request.origin && request.origin !== 'null') {
    return request.origin === originOf(publicBaseUrl) || request.origin === request.requestOrigin;
  }
  return true;
}

export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
