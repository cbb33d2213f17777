import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { McpOAuthRepository } from './mcp-oauth.repository.js';

/**
 * oidc-provider's storage, one per project and model, on the database (so that every instance
 * serves every step of a flow). Records are found by the SHA-256 of their id; a token's id (its
 * value) is put back on the way out, never stored.
 */
export class OAuthRecordAdapter implements Adapter {
  constructor(
    private readonly repository: McpOAuthRepository,
    private readonly projectId: string,
    private readonly model: string,
    /** Told when a record is destroyed or a grant revoked (verified access tokens are forgotten). */
    private readonly onRevoke: (revoked: { id?: string; grantId?: string }) => void,
    /** Called once a record is stored (the audit log's record of a registered client). */
    private readonly afterUpsert?: (id: string, payload: AdapterPayload) => Promise<void>,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
    const stored: Record<string, unknown> = { ...payload };
    if (TOKEN_MODELS.has(this.model)) {
      delete stored.jti;
    }
    await this.repository.upsertRecord(this.projectId, this.model, id, stored, expiresIn);
    await this.afterUpsert?.(id, payload);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const row = await this.repository.findRecord(this.projectId, this.model, { id });
    return row ? this.payloadOf(id, row) : undefined;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const row = await this.repository.findRecord(this.projectId, this.model, { uid });
    return row ? { ...row.payload, ...(row.consumed_at ? { consumed: true } : {}) } : undefined;
  }

  findByUserCode(): Promise<AdapterPayload | undefined> {
    // The device flow is off.
    return Promise.resolve(undefined);
  }

  consume(id: string): Promise<void> {
    return this.repository.consumeRecord(this.projectId, this.model, id);
  }

  destroy(id: string): Promise<void> {
    this.onRevoke({ id });
    return this.repository.destroyRecord(this.projectId, this.model, id);
  }

  revokeByGrantId(grantId: string): Promise<void> {
    this.onRevoke({ grantId });
    return this.repository.revokeByGrantId(this.projectId, grantId);
  }

  private payloadOf(id: string, row: { payload: Record<string, unknown>; consumed_at: Date | null }): AdapterPayload {
    return {
      ...row.payload,
      // Tokens carry their id as jti; other models keep theirs in the payload.
      ...(TOKEN_MODELS.has(this.model) ? { jti: id } : {}),
      ...(row.consumed_at ? { consumed: Math.floor(row.consumed_at.getTime() / 1000) } : {}),
    };
  }
}

const TOKEN_MODELS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'ClientCredentials',
  'InitialAccessToken',
  'RegistrationAccessToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
  'ReplayDetection',
]);
