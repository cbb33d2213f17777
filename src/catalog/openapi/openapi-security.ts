import type { SecurityMember } from '../../functions/openapi-wire.js';
import type { Operation } from './openapi-operation.js';
import { isNode } from './openapi-schema.js';
import { isAbsolute } from './openapi-servers.js';

type Node = Record<string, unknown>;

/**
 * The catalogue's security schemes for the requirements the document states (globally and per
 * operation). The catalogue has one scheme of each kind per app: when a document offers two of a
 * kind, the first one required wins and the other is noted.
 */
export function mapSecurity(
  doc: Node,
  operations: Operation[],
  appName: string,
  oidcDiscovery: Node | undefined,
  notes: string[],
  members: Map<string, SecurityMember> = new Map(),
): Record<string, Record<string, unknown>> {
  const components = isNode(doc.components) ? doc.components : {};
  const declared = isNode(components.securitySchemes) ? components.securitySchemes : {};
  const used: string[] = [];
  let allowsAnonymous = false;
  const requirementsOf = (value: unknown) => (Array.isArray(value) ? value.filter(isNode) : undefined);
  const global = requirementsOf(doc.security);
  for (const { op } of operations) {
    const requirements = requirementsOf(op.security) ?? global ?? [];
    if (requirements.length === 0 || requirements.some((requirement) => Object.keys(requirement).length === 0)) {
      allowsAnonymous = true;
    }
    for (const requirement of requirements) {
      for (const scheme of Object.keys(requirement)) {
        if (!used.includes(scheme)) {
          used.push(scheme);
        }
      }
    }
  }
  const schemes: Record<string, Record<string, unknown>> = {};
  const scopes = new Map<string, Set<string>>();
  for (const schemeName of used) {
    const scheme = declared[schemeName];
    if (!isNode(scheme)) {
      notes.push(`security scheme "${schemeName}" is required but not declared`);
      continue;
    }
    const mapped = mapScheme(schemeName, scheme, appName, oidcDiscovery, notes);
    const member: SecurityMember = { scheme: schemeName };
    members.set(schemeName, member);
    if (mapped?.kind === 'api_key') {
      // Its place, for when it is combined with another scheme and its value comes from the configuration.
      member.in = mapped.settings.location as SecurityMember['in'];
      member.name = mapped.settings.name as string;
    }
    if (!mapped) {
      continue;
    }
    if (schemes[mapped.kind]) {
      notes.push(`security scheme "${schemeName}" left out: the app already has a ${mapped.kind} scheme`);
      continue;
    }
    member.kind = mapped.kind as SecurityMember['kind'];
    schemes[mapped.kind] = mapped.settings;
    if (mapped.scopes) {
      scopes.set(mapped.kind, mapped.scopes);
    }
  }
  const oauth2 = schemes.oauth2;
  if (oauth2) {
    oauth2.scope = [...(scopes.get('oauth2') ?? [])].sort().join(' ');
  }
  if (allowsAnonymous || Object.keys(schemes).length === 0) {
    schemes.no_auth = {};
  }
  return schemes;
}

function mapScheme(
  schemeName: string,
  scheme: Node,
  appName: string,
  oidcDiscovery: Node | undefined,
  notes: string[],
): { kind: string; settings: Node; scopes?: Set<string> } | undefined {
  const type = typeof scheme.type === 'string' ? scheme.type : '';
  const placeholders = {
    client_id: `{{ ${appName}_CLIENT_ID }}`,
    client_secret: `{{ ${appName}_CLIENT_SECRET }}`,
  };
  switch (type) {
    case 'apiKey': {
      const location = scheme.in;
      if ((location === 'header' || location === 'query' || location === 'cookie') && typeof scheme.name === 'string') {
        return { kind: 'api_key', settings: { location, name: scheme.name } };
      }
      notes.push(`security scheme "${schemeName}": apiKey in "${String(location)}" is not supported`);
      return undefined;
    }
    case 'http': {
      const kind = typeof scheme.scheme === 'string' ? scheme.scheme.toLowerCase() : '';
      if (kind === 'basic') {
        return { kind: 'http_basic', settings: {} };
      }
      if (kind === 'bearer') {
        return { kind: 'http_bearer', settings: {} };
      }
      notes.push(`security scheme "${schemeName}": http "${kind}" is not supported`);
      return undefined;
    }
    case 'oauth2': {
      const flows = isNode(scheme.flows) ? scheme.flows : {};
      const code = isNode(flows.authorizationCode) ? flows.authorizationCode : undefined;
      if (code && isAbsolute(code.authorizationUrl) && isAbsolute(code.tokenUrl)) {
        return {
          kind: 'oauth2',
          settings: oauth2Settings(
            placeholders,
            code.authorizationUrl as string,
            code.tokenUrl as string,
            isAbsolute(code.refreshUrl) ? (code.refreshUrl as string) : (code.tokenUrl as string),
          ),
          scopes: new Set(isNode(code.scopes) ? Object.keys(code.scopes) : []),
        };
      }
      // Without an authorization-code flow Patchbay cannot link an account, but the API takes a
      // bearer token obtained elsewhere.
      notes.push(
        `security scheme "${schemeName}": oauth2 without an authorization-code flow (${Object.keys(flows).join(', ') || 'no flows'}) is imported as http_bearer`,
      );
      return { kind: 'http_bearer', settings: {} };
    }
    case 'openIdConnect': {
      if (
        oidcDiscovery &&
        isAbsolute(oidcDiscovery.authorization_endpoint) &&
        isAbsolute(oidcDiscovery.token_endpoint)
      ) {
        const supported = Array.isArray(oidcDiscovery.scopes_supported)
          ? oidcDiscovery.scopes_supported.filter((s): s is string => typeof s === 'string')
          : ['openid'];
        return {
          kind: 'oauth2',
          settings: oauth2Settings(
            placeholders,
            oidcDiscovery.authorization_endpoint as string,
            oidcDiscovery.token_endpoint as string,
            oidcDiscovery.token_endpoint as string,
          ),
          scopes: new Set(supported),
        };
      }
      notes.push(
        `security scheme "${schemeName}": openIdConnect needs its discovery document (--openid-discovery FILE); imported as http_bearer`,
      );
      return { kind: 'http_bearer', settings: {} };
    }
    default:
      notes.push(`security scheme "${schemeName}": type "${type}" is not supported`);
      return undefined;
  }
}

function oauth2Settings(
  placeholders: { client_id: string; client_secret: string },
  authorizeUrl: string,
  tokenUrl: string,
  refreshUrl: string,
): Node {
  return {
    location: 'header',
    name: 'Authorization',
    prefix: 'Bearer',
    client_id: placeholders.client_id,
    client_secret: placeholders.client_secret,
    scope: '',
    authorize_url: authorizeUrl,
    access_token_url: tokenUrl,
    refresh_token_url: refreshUrl,
  };
}

/**
 * An operation's requirements (its own, else the document's) as alternatives of members, when one of them
 * combines two schemes or more (AND); undefined otherwise, so that functions whose requirements are single
 * schemes keep their records (the configured scheme serves them, as before).
 */
export function operationSecurity(
  doc: Node,
  op: Node,
  members: Map<string, SecurityMember>,
): SecurityMember[][] | undefined {
  const requirements = (Array.isArray(op.security) ? op.security : Array.isArray(doc.security) ? doc.security : [])
    .filter(isNode)
    .map((requirement) => Object.keys(requirement));
  if (!requirements.some((names) => names.length > 1)) {
    return undefined;
  }
  return requirements.map((names) => names.map((name) => ({ ...(members.get(name) ?? { scheme: name }) })));
}
