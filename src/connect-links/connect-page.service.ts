import { Injectable } from '@nestjs/common';
import { constantTimeEqual, DomainError, hashBearerSecret } from '../../libs/common/src/index.js';
import { AppConfigurationsRepository } from '../app-configurations/app-configurations.repository.js';
import type { AppEntity } from '../apps/app.entity.js';
import { SYSTEM_ACTOR } from '../audit/actor.js';
import { AppConfig } from '../config/app-config.js';
import type { LinkedAccountCredentials } from '../linked-accounts/credentials.js';
import { LinkedAccountsRepository } from '../linked-accounts/linked-accounts.repository.js';
import { LinkedAccountsService } from '../linked-accounts/linked-accounts.service.js';
import { describedScopes, requestedScope } from '../oauth2/oauth2-client.js';
import { OAuth2Service } from '../oauth2/oauth2.service.js';
import { plainProviderError } from '../oauth2/provider-errors.js';
import type { ProjectEntity } from '../projects/project.entity.js';
import { brandOf, messagePage, type PageResponse, seeOther, successPage } from '../projects/end-user-page.js';
import type { ConnectLinkEntity } from './connect-link.entity.js';
import {
  ConnectPageError,
  crossSitePost,
  expiredLink,
  revokedLink,
  tooManyPosts,
  unknownLink,
  usedLink,
} from './connect-links.errors.js';
import { ConnectLinksRepository } from './connect-links.repository.js';
import { CONNECT_PATH, ConnectLinksService, statusOf } from './connect-links.service.js';
import { type FieldErrors, type LinkView, linkPage } from './connect-page.js';
import { csrfToken, isSameSite, originOf, type PageRequest } from './connect-page-guard.js';

export const COOKIE_NAME = 'patchbay_connect';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const POST_WINDOW_MS = 60_000;

/** A cookie for the controller to set: the link's token, scoped to the link's own path. */
export interface TokenCookie {
  name: string;
  value: string;
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

type FormScheme = 'api_key' | 'http_basic' | 'http_bearer' | 'no_auth';

/** The fields each scheme's form posts, with the message shown beside an empty one. */
const FORM_FIELDS: Record<FormScheme, [field: string, missing: string][]> = {
  api_key: [['api_key', 'Enter your API key.']],
  http_basic: [
    ['username', 'Enter your user name.'],
    ['password', 'Enter your password.'],
  ],
  http_bearer: [['token', 'Enter your token.']],
  no_auth: [],
};

interface UsableLink {
  link: ConnectLinkEntity;
  app: AppEntity;
  project: ProjectEntity;
  scheme: LinkView['scheme'];
  /** The configuration's `security_scheme_overrides` (its OAuth 2.0 scope wins over the catalogue's). */
  overrides: Record<string, Record<string, unknown>> | null;
  token: string;
}

/**
 * The end user's side of a connect link: the page, its form posts and the OAuth 2.0 round trip.
 * Every answer is a page (or a redirect); credentials go through the linking service, which
 * seals and stores them, and are never echoed nor logged.
 */
@Injectable()
export class ConnectPageService {
  constructor(
    private readonly links: ConnectLinksRepository,
    private readonly connectLinks: ConnectLinksService,
    private readonly configurations: AppConfigurationsRepository,
    private readonly accounts: LinkedAccountsService,
    private readonly accountRows: LinkedAccountsRepository,
    private readonly oauth2: OAuth2Service,
    private readonly config: AppConfig,
  ) {}

  /**
   * First load: the token in the URL becomes an HttpOnly cookie and the browser goes on (303) to
   * the same page without the token, so it never sits in history, logs or a Referer.
   */
  async open(
    linkId: string,
    token: string | undefined,
  ): Promise<PageResponse | { cookie: TokenCookie; location: string }> {
    return this.page(async () => {
      const link = await this.authenticated(linkId, token);
      usable(link);
      return {
        cookie: {
          name: COOKIE_NAME,
          value: token as string,
          path: `${CONNECT_PATH}/${link.id}`,
          maxAgeSeconds: Math.max(1, Math.ceil((link.expires_at.getTime() - Date.now()) / 1000)),
          secure: this.config.publicBaseUrl.startsWith('https:'),
        },
        location: `${CONNECT_PATH}/${link.id}`,
      };
    }, linkId);
  }

  view(request: PageRequest): Promise<PageResponse> {
    return this.page(async () => linkPage(this.viewOf(await this.usableLink(request))), request.linkId);
  }

  /** A form post of a non-OAuth scheme: validate, link (or re-link in place), use the link up. */
  submit(request: PageRequest, form: Record<string, unknown>): Promise<PageResponse> {
    return this.page(async () => {
      const usableLink = await this.postedLink(request, form);
      const { link, scheme } = usableLink;
      if (scheme === 'oauth2') {
        return seeOther(`${CONNECT_PATH}/${link.id}`);
      }
      const values: Record<string, string> = {};
      const fieldErrors: FieldErrors = {};
      for (const [field, missing] of FORM_FIELDS[scheme]) {
        const value = form[field];
        if (typeof value !== 'string' || value.trim() === '') {
          fieldErrors[field] = missing;
        } else {
          values[field] = value;
        }
      }
      if (Object.keys(fieldErrors).length > 0) {
        return linkPage({ ...this.viewOf(usableLink), fieldErrors }, 422);
      }
      if (!(await this.connectLinks.claim(link))) {
        throw await this.unusableNow(link);
      }
      let linkedAccountId: string;
      try {
        // The end user, on the link's page: the service links on their behalf.
        const account = await this.accounts.linkOrRelinkAccount(
          link.project_id,
          SYSTEM_ACTOR,
          link.app_name,
          link.linked_account_owner_id,
          scheme,
          credentialsOf(scheme, values),
          link.id,
        );
        linkedAccountId = account.id;
      } catch (error) {
        await this.connectLinks.release(link);
        if (error instanceof DomainError) {
          this.connectLinks.fail(link, 'configuration_changed');
          throw new ConnectPageError(400, 'Linking failed', error.message);
        }
        throw error;
      }
      await this.connectLinks.attach(link, linkedAccountId);
      return this.done(usableLink, linkedAccountId);
    }, request.linkId);
  }

  /** The oauth2 button: starts the authorization-code flow, which comes back to `oauth2Return`. */
  startOAuth2(request: PageRequest, form: Record<string, unknown>): Promise<PageResponse> {
    return this.page(async () => {
      const { link, scheme } = await this.postedLink(request, form);
      if (scheme !== 'oauth2') {
        return seeOther(`${CONNECT_PATH}/${link.id}`);
      }
      await this.links.markOAuth2Started(link.id);
      let url: string;
      try {
        ({ url } = await this.oauth2.startOAuth2Linking(link.project_id, {
          app_name: link.app_name,
          linked_account_owner_id: link.linked_account_owner_id,
          after_oauth2_link_redirect_url: `${this.config.publicBaseUrl}${CONNECT_PATH}/${link.id}/oauth2-return`,
        }));
      } catch (error) {
        if (error instanceof DomainError) {
          throw new ConnectPageError(400, 'Linking failed', error.message);
        }
        throw error;
      }
      return seeOther(url);
    }, request.linkId);
  }

  /**
   * Where the OAuth 2.0 callback sends the browser. Its query is not trusted: success counts only
   * when the owner's account was written after this link started its flow.
   */
  oauth2Return(request: PageRequest, query: Record<string, unknown>): Promise<PageResponse> {
    return this.page(async () => {
      const usableLink = await this.usableLink(request);
      const { link } = usableLink;
      if (query.status !== 'success') {
        const code = typeof query.error === 'string' ? query.error : 'oauth2_error';
        this.connectLinks.fail(link, code);
        // Plain words only: the provider's code and text are for the developer (the webhook, the logs).
        return linkPage(
          { ...this.viewOf(usableLink), error: plainProviderError(code, usableLink.app.display_name) },
          400,
        );
      }
      const accountId = typeof query.linked_account_id === 'string' ? query.linked_account_id : '';
      const account = UUID.test(accountId) ? await this.accountRows.findForProject(link.project_id, accountId) : null;
      const started = link.oauth2_started_at?.getTime();
      if (
        !account ||
        started === undefined ||
        account.app_name !== link.app_name ||
        account.linked_account_owner_id !== link.linked_account_owner_id ||
        account.updated_at.getTime() < started
      ) {
        return linkPage({ ...this.viewOf(usableLink), error: 'The account was not linked. Try again.' }, 400);
      }
      if (!(await this.connectLinks.complete(link, account.id))) {
        throw await this.unusableNow(link);
      }
      return this.done(usableLink, account.id);
    }, request.linkId);
  }

  /** Why a link that was usable a moment ago is not any more (another post won, or it expired). */
  private async unusableNow(link: ConnectLinkEntity): Promise<ConnectPageError> {
    const now = await this.links.findForProject(link.project_id, link.id);
    return now && statusOf(now) === 'expired' ? expiredLink() : usedLink();
  }

  private done(usableLink: UsableLink, linkedAccountId: string): PageResponse {
    const { link, app } = usableLink;
    // The cookie has done its work; the link is used up either way.
    const clear = {
      'set-cookie': `${COOKIE_NAME}=; Path=${CONNECT_PATH}/${link.id}; Max-Age=0; HttpOnly; SameSite=Lax`,
    };
    if (link.after_link_redirect_url) {
      const target = new URL(link.after_link_redirect_url);
      target.searchParams.set('linked_account_id', linkedAccountId);
      target.searchParams.set('status', 'success');
      return seeOther(target.href, clear);
    }
    const page = successPage(app.display_name, brandOf(usableLink.project));
    return { ...page, headers: { ...page.headers, ...clear } };
  }

  /** A usable link for a form post: same-site request, valid CSRF token, within the rate limit. */
  private async postedLink(request: PageRequest, form: Record<string, unknown>): Promise<UsableLink> {
    if (!isSameSite(request, this.config.publicBaseUrl)) {
      throw crossSitePost();
    }
    const usableLink = await this.usableLink(request);
    const csrf = form.csrf_token;
    if (typeof csrf !== 'string' || !constantTimeEqual(csrf, csrfToken(usableLink.token, usableLink.link.id))) {
      throw crossSitePost();
    }
    if ((await this.links.countPost(usableLink.link.id, POST_WINDOW_MS)) > this.config.CONNECT_LINK_POSTS_PER_MINUTE) {
      throw tooManyPosts();
    }
    return usableLink;
  }

  private async usableLink(request: PageRequest): Promise<UsableLink> {
    const link = await this.authenticated(request.linkId, request.cookieToken, true);
    usable(link);
    const full = await this.links.findWithAppAndProject(link.id);
    const configuration = await this.configurations.findForProject(link.project_id, link.app_name);
    if (!full?.app || !full.project || !configuration || !configuration.enabled) {
      throw new ConnectPageError(
        410,
        'Link no longer usable',
        'This app is no longer set up for linking. Ask for a new link.',
      );
    }
    return {
      link: full,
      app: full.app,
      project: full.project,
      scheme: configuration.security_scheme,
      overrides: configuration.security_scheme_overrides ?? null,
      token: request.cookieToken as string,
    };
  }

  /** The link whose token is `token`; a page saying so otherwise (nothing tells a wrong token from an unknown link). */
  private async authenticated(
    linkId: string,
    token: string | undefined,
    fromCookie = false,
  ): Promise<ConnectLinkEntity> {
    const link = UUID.test(linkId) ? await this.links.findWithAppAndProject(linkId) : null;
    if (link && statusOf(link) !== 'pending') {
      // A used, expired or revoked link says so to anyone (the back button after success has no cookie).
      usable(link);
    }
    if (!link || !token || !constantTimeEqual(hashBearerSecret(token), link.token_hash)) {
      if (link && fromCookie && !token) {
        throw new ConnectPageError(
          401,
          'Open the link again',
          'This page needs the link you were given (cookies must be enabled). Open that link again.',
        );
      }
      throw unknownLink();
    }
    return link;
  }

  private viewOf({ link, app, project, scheme, overrides, token }: UsableLink): LinkView {
    const oauth2 = scheme === 'oauth2' ? app.security_schemes.oauth2 : undefined;
    const authorizeUrl = oauth2?.authorize_url;
    const hintOf =
      scheme === 'api_key' || scheme === 'http_basic' || scheme === 'http_bearer'
        ? app.security_schemes[scheme]
        : undefined;
    return {
      linkId: link.id,
      brand: brandOf(project, link.after_link_redirect_url),
      appDisplayName: app.display_name,
      appDescription: app.description,
      appLogo: app.logo?.startsWith('data:image/') ? app.logo : null,
      ownerName: link.owner_display_name || link.linked_account_owner_id,
      scheme,
      scopes: oauth2 ? describedScopes(requestedScope(oauth2, overrides?.oauth2), oauth2.scope_descriptions) : [],
      hint: typeof hintOf?.hint === 'string' ? hintOf.hint : null,
      hintUrl: typeof hintOf?.hint_url === 'string' && hintOf.hint_url.startsWith('https://') ? hintOf.hint_url : null,
      csrfToken: csrfToken(token, link.id),
      formTargets: [
        typeof authorizeUrl === 'string' ? originOf(authorizeUrl) : undefined,
        link.after_link_redirect_url ? originOf(link.after_link_redirect_url) : undefined,
      ].filter((origin): origin is string => origin !== undefined),
    };
  }

  /**
   * Every ConnectPageError becomes its page; other errors stay errors (a 500 and a logged stack). The page of a
   * known link shows the developer's branding and the way back; a 404 shows neither, so that it tells a wrong
   * token from an unknown link no more than before.
   */
  private async page<T>(work: () => Promise<T>, linkId?: string): Promise<T | PageResponse> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ConnectPageError) {
        const link =
          error.status !== 404 && linkId && UUID.test(linkId) ? await this.links.findWithAppAndProject(linkId) : null;
        const brand = link?.project ? brandOf(link.project, link.after_link_redirect_url) : undefined;
        return messagePage(error.status, error.title, error.message, brand);
      }
      throw error;
    }
  }
}

function usable(link: ConnectLinkEntity): void {
  switch (statusOf(link)) {
    case 'pending':
      return;
    case 'completed':
      throw usedLink();
    case 'expired':
      throw expiredLink();
    case 'revoked':
      throw revokedLink();
  }
}

function credentialsOf(scheme: FormScheme, values: Record<string, string>): LinkedAccountCredentials {
  switch (scheme) {
    case 'api_key':
      return { api_key: values.api_key };
    case 'http_basic':
      return { username: values.username, password: values.password };
    case 'http_bearer':
      return { token: values.token };
    case 'no_auth':
      return {};
  }
}
