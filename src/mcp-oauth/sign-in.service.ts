import { createHmac } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import * as client from 'openid-client';
import { constantTimeEqual, hashBearerSecret, newBearerSecret, SecretBox } from '../../libs/common/src/index.js';
import { SYSTEM_ACTOR } from '../audit/actor.js';
import { AuditService } from '../audit/audit.service.js';
import { type Brand, brandOf, seeOther, type PageResponse } from '../projects/end-user-page.js';
import { AppConfig } from '../config/app-config.js';
import { AuthorizationServer, mcpTokenIdOfGrant } from './authorization-server.js';
import { plainOAuthError, type ServerKeys } from './provider-configuration.js';
import { IdentityProvidersService } from './identity-providers.service.js';
import { McpOAuthRepository } from './mcp-oauth.repository.js';
import { MCP_SCOPE, projectMcpPath, projectMcpUrl } from './mcp-oauth.paths.js';
import { consentPage, errorPage } from './sign-in-pages.js';
import { MCP_TOKEN_PREFIX, TOKEN_TTL_DEFAULT_S } from './mcp-token.entity.js';

const SIGN_IN_TTL_S = 600;
/** Records of the signed-in user's name at the identity provider, by owner id, read by the consent page. */
const OWNER_NAME = 'OwnerName';

/** What the controller reads from a browser request for the sign-in and consent pages. */
export interface BrowserRequest {
  raw: IncomingMessage;
  rawReply: ServerResponse;
  origin?: string;
  fetchSite?: string;
}

interface SignInState {
  uid: string;
  verifier: string;
  nonce: string;
}

/**
 * The end user's side of an MCP client's authorization: oidc-provider hands its interactions here;
 * the login is a sign-in at the project's OpenID Connect provider (openid-client, PKCE, state,
 * nonce), whose configured claim becomes the linked-account owner; the consent page then says
 * which client asks, for which apps, as whom, and with what permissions. Allowing creates the
 * grant and the owner-scoped MCP token that the OAuth tokens stand for.
 */
@Injectable()
export class SignInService {
  private readonly logger = new Logger('McpSignIn');

  constructor(
    private readonly server: AuthorizationServer,
    private readonly identityProviders: IdentityProvidersService,
    private readonly repository: McpOAuthRepository,
    private readonly secretBox: SecretBox,
    private readonly config: AppConfig,
    private readonly audit: AuditService,
  ) {}

  /** GET of an interaction: to the identity provider for a login, or the consent page. */
  async showInteraction(projectId: string, uid: string, request: BrowserRequest): Promise<PageResponse> {
    const provider = await this.server.providerFor(projectId);
    const brand = await this.brand(projectId);
    if (!provider) {
      return notSetUp(brand);
    }
    const details = await this.details(projectId, uid, request);
    if (!details) {
      return expired(brand);
    }
    if (details.prompt.name === 'login') {
      return this.startSignIn(projectId, uid, brand);
    }
    const clientId = String(details.params.client_id);
    const redirectUri = String(details.params.redirect_uri);
    const mcpClient = await provider.Client.find(clientId);
    const ownerId = details.session?.accountId ?? '';
    const named = ownerId ? await this.repository.findRecord(projectId, OWNER_NAME, { id: ownerId }) : null;
    return consentPage({
      action: `${projectMcpPath(projectId)}/interaction/${uid}`,
      csrfToken: await this.csrfToken(projectId, uid),
      brand: brand ?? { name: 'this project', logo: null, accent: null, backUrl: null },
      clientName: await this.clientName(provider, clientId, redirectUri),
      clientUri: mcpClient?.clientUri ?? null,
      redirectOrigin: new URL(redirectUri).origin,
      ownerId,
      ownerName: typeof named?.payload.name === 'string' ? named.payload.name : null,
      apps: await this.repository.enabledApps(projectId),
    });
  }

  /** POST of the consent form: allow (grant + MCP token) or deny; back to oidc-provider either way. */
  async decide(
    projectId: string,
    uid: string,
    request: BrowserRequest,
    form: Record<string, unknown>,
  ): Promise<PageResponse> {
    const provider = await this.server.providerFor(projectId);
    const brand = await this.brand(projectId);
    if (!provider) {
      return notSetUp(brand);
    }
    if (!sameSite(request, this.config.publicBaseUrl)) {
      return errorPage(403, 'Request refused', 'This form can only be sent from its own page.', brand);
    }
    const csrf = form.csrf_token;
    if (typeof csrf !== 'string' || !constantTimeEqual(csrf, await this.csrfToken(projectId, uid))) {
      return errorPage(403, 'Request refused', 'This form can only be sent from its own page.', brand);
    }
    const details = await this.details(projectId, uid, request);
    if (!details || details.prompt.name !== 'consent' || !details.session?.accountId) {
      return expired(brand);
    }
    if (form.decision !== 'allow') {
      const returnTo = await provider.interactionResult(
        request.raw,
        request.rawReply,
        { error: 'access_denied', error_description: 'The user declined access' },
        { mergeWithLastSubmission: false },
      );
      return seeOther(returnTo);
    }
    const accountId = details.session.accountId;
    const clientId = String(details.params.client_id);
    const grant = new provider.Grant({ accountId, clientId });
    // Exactly what the authorization request asked for (oidc-provider lists it); the resource can only be
    // this project's MCP address (the authorization server refuses any other).
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope?.length) {
      grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    }
    if (missing.missingOIDCClaims?.length) {
      grant.addOIDCClaims(missing.missingOIDCClaims);
    }
    const resource = projectMcpUrl(this.config.publicBaseUrl, projectId);
    grant.addResourceScope(
      resource,
      [...new Set([MCP_SCOPE, ...(missing.missingResourceScopes?.[resource] ?? [])])].join(' '),
    );
    const grantId = await grant.save();
    const token = {
      id: mcpTokenIdOfGrant(grantId),
      project_id: projectId,
      linked_account_owner_id: accountId,
      apps: null,
      // Never handed out: the OAuth tokens stand for this MCP token.
      token_hash: hashBearerSecret(newBearerSecret(MCP_TOKEN_PREFIX)),
      expires_at: new Date(Date.now() + TOKEN_TTL_DEFAULT_S * 1000),
      client_id: clientId,
      client_name: await this.clientName(provider, clientId, String(details.params.redirect_uri)),
    };
    await this.repository.insertGrantToken(token);
    // The end user's consent: recorded right after the insert (a single statement, no transaction to share).
    await this.audit.record({
      projectId,
      actor: SYSTEM_ACTOR,
      action: 'mcp_token.created',
      resourceId: token.id,
      after: { ...token, oauth_client_id: clientId },
    });
    const returnTo = await provider.interactionResult(request.raw, request.rawReply, { consent: { grantId } });
    return seeOther(returnTo);
  }

  /** The identity provider's redirect back: the claim becomes the owner, and the interaction goes on. */
  async signInCallback(projectId: string, query: Record<string, unknown>): Promise<PageResponse> {
    const provider = await this.server.providerFor(projectId);
    const idp = provider ? await this.identityProviders.clientFor(projectId) : null;
    const brand = await this.brand(projectId);
    if (!provider || !idp) {
      return notSetUp(brand);
    }
    const state = typeof query.state === 'string' ? query.state : '';
    const row = state ? await this.repository.findRecord(projectId, 'SignIn', { id: state }) : null;
    if (!row) {
      return errorPage(
        400,
        'Sign-in failed',
        'This sign-in is unknown or expired. Go back to the app and try again.',
        brand,
      );
    }
    // A state works once.
    await this.repository.destroyRecord(projectId, 'SignIn', state);
    const saved = row.payload as unknown as SignInState;
    if (typeof query.error === 'string') {
      await this.abort(provider, saved.uid, query.error);
      return errorPage(
        400,
        'Sign-in failed',
        plainOAuthError(query.error, typeof query.error_description === 'string' ? query.error_description : undefined),
        brand,
      );
    }
    const callbackUrl = new URL(idp.redirectUri);
    for (const [name, value] of Object.entries(query)) {
      if (typeof value === 'string') {
        callbackUrl.searchParams.set(name, value);
      }
    }
    let ownerId: string | undefined;
    let ownerName: string | undefined;
    try {
      const tokens = await client.authorizationCodeGrant(idp.configuration, callbackUrl, {
        pkceCodeVerifier: this.secretBox.open(saved.verifier),
        expectedState: state,
        expectedNonce: saved.nonce,
        idTokenExpected: true,
      });
      const claims: Record<string, unknown> = tokens.claims() ?? {};
      let value = claims[idp.ownerClaim];
      if (
        value === undefined &&
        idp.configuration.serverMetadata().userinfo_endpoint &&
        typeof claims.sub === 'string'
      ) {
        value = (await client.fetchUserInfo(idp.configuration, tokens.access_token, claims.sub))[idp.ownerClaim];
      }
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') {
        ownerId = String(value).slice(0, 255);
      }
      // The user's own name, for the consent page, when the provider gives one (the `profile` scope).
      if (typeof claims.name === 'string' && claims.name.trim() !== '' && idp.ownerClaim !== 'name') {
        ownerName = claims.name.trim().slice(0, 255);
      }
    } catch (error) {
      this.logger.warn(`Sign-in at the identity provider of project ${projectId} failed: ${(error as Error).message}`);
      return errorPage(
        400,
        'Sign-in failed',
        'Your sign-in could not be confirmed. Go back to the app and try again.',
        brand,
      );
    }
    if (!ownerId) {
      return errorPage(
        400,
        'Sign-in failed',
        `Your account has no ${idp.ownerClaim}, which this project needs to know who you are.`,
        brand,
      );
    }
    const interaction = await provider.Interaction.find(saved.uid);
    if (!interaction) {
      return expired(brand);
    }
    if (ownerName) {
      await this.repository.upsertRecord(projectId, OWNER_NAME, ownerId, { name: ownerName }, SIGN_IN_TTL_S);
    }
    interaction.result = { login: { accountId: ownerId } };
    await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    return seeOther(interaction.returnTo);
  }

  /** The project's branding for its pages (null for a project that does not exist). */
  private async brand(projectId: string): Promise<Brand | undefined> {
    const project = await this.repository.findProject(projectId);
    return project ? brandOf(project) : undefined;
  }

  /** How the pages and the token list name an MCP client: its registered client_name, else its return host. */
  private async clientName(
    provider: NonNullable<Awaited<ReturnType<AuthorizationServer['providerFor']>>>,
    clientId: string,
    redirectUri: string,
  ): Promise<string> {
    const mcpClient = await provider.Client.find(clientId);
    return mcpClient?.clientName || new URL(redirectUri).host;
  }

  private async startSignIn(projectId: string, uid: string, brand: Brand | undefined): Promise<PageResponse> {
    let idp;
    try {
      idp = await this.identityProviders.clientFor(projectId);
    } catch (error) {
      this.logger.warn(`The identity provider of project ${projectId} cannot be reached: ${(error as Error).message}`);
      return errorPage(
        502,
        'Sign-in unavailable',
        'The sign-in service of this app cannot be reached. Try again later.',
        brand,
      );
    }
    if (!idp) {
      return notSetUp(brand);
    }
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    await this.repository.upsertRecord(
      projectId,
      'SignIn',
      state,
      { uid, verifier: this.secretBox.seal(verifier), nonce },
      SIGN_IN_TTL_S,
    );
    const url = client.buildAuthorizationUrl(idp.configuration, {
      redirect_uri: idp.redirectUri,
      scope: idp.scopes,
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    return seeOther(url.href);
  }

  private async details(projectId: string, uid: string, request: BrowserRequest) {
    const provider = await this.server.providerFor(projectId);
    try {
      const details = await provider!.interactionDetails(request.raw, request.rawReply);
      return details.uid === uid ? details : null;
    } catch {
      // No interaction cookie, or an expired interaction.
      return null;
    }
  }

  private async abort(
    provider: NonNullable<Awaited<ReturnType<AuthorizationServer['providerFor']>>>,
    uid: string,
    error: string,
  ) {
    const interaction = await provider.Interaction.find(uid);
    if (interaction) {
      interaction.result = { error: error === 'access_denied' ? 'access_denied' : 'login_required' };
      await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
    }
  }

  private async csrfToken(projectId: string, uid: string): Promise<string> {
    const keys = await this.server.keysFor(projectId);
    return createHmac('sha256', (keys as ServerKeys).cookieKeys[0])
      .update(`consent:${uid}`)
      .digest('base64url');
  }
}

function notSetUp(brand: Brand | undefined): PageResponse {
  return errorPage(404, 'Sign-in is not set up', 'This project has not set up sign-in for MCP clients.', brand);
}

function expired(brand: Brand | undefined): PageResponse {
  return errorPage(
    400,
    'This sign-in has expired',
    'This page is no longer valid (it expired, or was opened in another browser). Go back to the app and connect again.',
    brand,
  );
}

/** Fetch metadata and Origin, when sent, must say the post came from Patchbay's own page. */
function sameSite(request: BrowserRequest, publicBaseUrl: string): boolean {
  if (request.fetchSite && request.fetchSite !== 'same-origin') {
    return false;
  }
  if (request.origin && request.origin !== 'null') {
    return request.origin === new URL(publicBaseUrl).origin;
  }
  return true;
}
