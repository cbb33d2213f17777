/**
 * What the audit log records, in one place: each resource type, the verbs of its actions, and the
 * fields of its snapshots (`before`, `after`). Snapshots are built from an allow-list, so a column
 * added later (a credential, a token hash, a sealed secret) is left out until it is named here.
 */
export const AUDITED_RESOURCES = {
  app_configuration: {
    verbs: ['created', 'updated', 'deleted'],
    fields: [
      'app_name',
      'security_scheme',
      'security_scheme_overrides.oauth2.client_id',
      'security_scheme_overrides.oauth2.redirect_url',
      'security_scheme_overrides.oauth2.scope',
      'enabled',
      'all_functions_enabled',
      'enabled_functions',
      'owner_execution_limit',
      // The names of the extra credentials, never their values.
      'extra_credential_names',
      'deleted_linked_accounts',
      // True when an update replaced the OAuth 2.0 client secret (its value is never recorded).
      'client_secret_replaced',
    ],
  },
  linked_account: {
    // `relinked`: new credentials for an existing account (OAuth 2.0 callback, connect page).
    verbs: ['created', 'relinked', 'updated', 'deleted'],
    fields: ['app_name', 'linked_account_owner_id', 'security_scheme', 'enabled', 'connect_link_id'],
  },
  connect_link: {
    verbs: ['created', 'revoked', 'completed'],
    // Not the redirect and webhook addresses: a query string may carry someone's token.
    fields: ['app_name', 'linked_account_owner_id', 'status', 'expires_at', 'linked_account_id'],
  },
  mcp_token: {
    verbs: ['created', 'revoked'],
    // A revocation at the MCP authorization server: `reason` (revoked_by_client, refresh_token_reused,
    // authorization_code_reused) and, for the first, which token the client presented (access_token, refresh_token).
    fields: ['linked_account_owner_id', 'apps', 'expires_at', 'oauth_client_id', 'reason', 'revoked_token'],
  },
  mcp_identity_provider: {
    verbs: ['created', 'updated', 'deleted'],
    fields: ['issuer', 'client_id', 'scopes', 'owner_claim'],
  },
  mcp_oauth_client: {
    verbs: ['registered'],
    fields: ['client_name', 'redirect_uris', 'grant_types', 'token_endpoint_auth_method'],
  },
  project: {
    verbs: ['created', 'updated'],
    fields: ['name', 'display_name', 'logo_url', 'accent_color', 'home_url'],
  },
  api_key: {
    verbs: ['created', 'revoked'],
    fields: ['expires_at', 'revoked_at'],
  },
  catalog: {
    verbs: ['imported'],
    fields: ['source', 'apps_added', 'apps_updated', 'functions_added', 'functions_updated'],
  },
  /** `patchbay secrets rotate`: counts only, never a key (the key id names which key of SECRETS_KEYS is newest). */
  sealing_key: {
    verbs: ['rotated'],
    fields: ['key_id', 'resealed', 'changed_concurrently', 'unreadable', 'remaining'],
  },
  mcp_server: {
    verbs: ['added', 'synced', 'removed'],
    fields: ['app_name', 'url', 'tool_count', 'functions_added', 'functions_updated', 'functions_deactivated'],
  },
} as const;

type Resources = typeof AUDITED_RESOURCES;
export type AuditResourceType = keyof Resources;
export type AuditAction = {
  [Type in AuditResourceType]: `${Type}.${Resources[Type]['verbs'][number]}`;
}[AuditResourceType];

export const AUDIT_RESOURCE_TYPES = Object.keys(AUDITED_RESOURCES) as AuditResourceType[];
export const AUDIT_ACTIONS = AUDIT_RESOURCE_TYPES.flatMap((type) =>
  AUDITED_RESOURCES[type].verbs.map((verb) => `${type}.${verb}` as AuditAction),
);

export function resourceTypeOf(action: AuditAction): AuditResourceType {
  return action.slice(0, action.indexOf('.')) as AuditResourceType;
}

/**
 * The allow-listed fields of `value`, nested paths kept nested; dates become RFC 3339 text. Null when
 * there is no value.
 */
export function snapshotOf(type: AuditResourceType, value: object | null | undefined): Record<string, unknown> | null {
  if (value === null || value === undefined) {
    return null;
  }
  const snapshot: Record<string, unknown> = {};
  for (const path of AUDITED_RESOURCES[type].fields) {
    const keys = path.split('.');
    let source: unknown = value;
    for (const key of keys) {
      source = isRecord(source) ? source[key] : undefined;
    }
    if (source === undefined) {
      continue;
    }
    let target = snapshot;
    for (const key of keys.slice(0, -1)) {
      target = (target[key] ??= {}) as Record<string, unknown>;
    }
    target[keys[keys.length - 1]] = plain(source);
  }
  return snapshot;
}

/** For an update: only the fields whose value changed, on both sides. */
export function changedFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { before: Record<string, unknown>; after: Record<string, unknown> } {
  const changed = { before: {} as Record<string, unknown>, after: {} as Record<string, unknown> };
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      if (key in before) {
        changed.before[key] = before[key];
      }
      if (key in after) {
        changed.after[key] = after[key];
      }
    }
  }
  return changed;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function plain(value: unknown): unknown {
  if (value instanceof Date) {
    return value.toISOString();
  }
  if (Array.isArray(value)) {
    return value.map(plain);
  }
  if (isRecord(value)) {
    // A nested object that is itself allow-listed only by its parent's path would leak its members.
    throw new Error('Audit snapshots name nested fields by their full path');
  }
  return value;
}
