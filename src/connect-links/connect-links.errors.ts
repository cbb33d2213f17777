import { BadRequestError, ConflictError, DomainError, NotFoundError } from '../../libs/common/src/index.js';

export class ConnectLinkNotFoundError extends NotFoundError {
  constructor(id: string) {
    super(`Connect link ${id} not found`);
  }
}

export class ConnectLinkNotPendingError extends ConflictError {
  constructor(id: string, status: string) {
    super(`Connect link ${id} is ${status}; only a pending link can be revoked`);
  }
}

export class AppConfigurationDisabledForLinkError extends BadRequestError {
  constructor(appName: string) {
    super(`App configuration for ${appName} is disabled in this project; enable it before creating a connect link`);
  }
}

/** What the page says when a link cannot be used; rendered as a page, never as JSON. */
export class ConnectPageError extends DomainError {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

export const unknownLink = () =>
  new ConnectPageError(404, 'Link not found', 'This link is not valid. Ask for a new link.');
export const expiredLink = () =>
  new ConnectPageError(410, 'Link expired', 'This link has expired. Ask for a new link.');
export const usedLink = () =>
  new ConnectPageError(410, 'Link already used', 'This link has already been used. Ask for a new link.');
export const revokedLink = () =>
  new ConnectPageError(410, 'Link revoked', 'This link was revoked. Ask for a new link.');
export const crossSitePost = () =>
  new ConnectPageError(403, 'Request refused', 'The form was not sent from this page. Open the link again.');
export const tooManyPosts = () =>
  new ConnectPageError(429, 'Too many attempts', 'Too many attempts with this link. Wait a minute and try again.');
