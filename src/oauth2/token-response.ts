/** Token types the OAuth 2.0 client library accepts; the token is applied as the app's scheme says anyway. */
const STANDARD_TOKEN_TYPES = new Set(['bearer', 'dpop']);

export interface NormalisedTokenResponse {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Brings a provider's token endpoint answer into the RFC 6749 §5 shape, driven by the app's scheme
 * options rather than by provider names:
 * - tokens nested in the answer are taken from `responsePath` (dotted, e.g. Slack's `authed_user`);
 * - form-encoded answers are read as well as JSON ones;
 * - a success status carrying an `error` (as GitHub answers) is an error answer;
 * - a missing or non-standard `token_type` becomes `bearer`, space-separated `scope` is kept and a
 *   list of scopes is joined;
 * - an `id_token` is dropped: linking an account is not a sign-in, and catalogue apps declare no
 *   issuer or keys to check one against.
 * Returns undefined when the answer is not a JSON or form object at all.
 */
export function normaliseTokenResponse(
  status: number,
  text: string,
  responsePath?: string,
): NormalisedTokenResponse | undefined {
  const payload = parseObject(text);
  if (!payload) {
    return undefined;
  }
  const success = status >= 200 && status < 300;
  const nested = responsePath ? dig(payload, responsePath) : payload;
  const error = stringOf(payload.error) ?? stringOf(nested?.error);
  if (!success || (error && !stringOf(nested?.access_token))) {
    const description = stringOf(payload.error_description) ?? stringOf(nested?.error_description);
    return {
      status: success ? 400 : status,
      body: error ? { error, ...(description ? { error_description: description } : {}) } : payload,
    };
  }
  if (!nested) {
    return { status: 200, body: {} };
  }
  const tokens: Record<string, unknown> = { ...nested };
  delete tokens.id_token;
  const tokenType = stringOf(tokens.token_type)?.toLowerCase();
  tokens.token_type = tokenType && STANDARD_TOKEN_TYPES.has(tokenType) ? tokenType : 'bearer';
  if (Array.isArray(tokens.scope)) {
    tokens.scope = tokens.scope.filter((item) => typeof item === 'string').join(' ');
  } else if (tokens.scope !== undefined && typeof tokens.scope !== 'string') {
    delete tokens.scope;
  }
  return { status: 200, body: tokens };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    const params = new URLSearchParams(text);
    return params.has('access_token') || params.has('error') ? Object.fromEntries(params) : undefined;
  }
}

function dig(value: Record<string, unknown>, path: string): Record<string, unknown> | undefined {
  let node: unknown = value;
  for (const key of path.split('.')) {
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return node && typeof node === 'object' && !Array.isArray(node) ? (node as Record<string, unknown>) : undefined;
}

/** A non-empty string, or undefined. */
function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
