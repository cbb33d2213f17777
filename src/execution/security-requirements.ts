import type { SecurityScheme } from '../apps/security-scheme.js';
import type { SecurityMember } from '../functions/openapi-wire.js';
import { ExecutionFailure } from './execution.errors.js';

/** A credential that goes beside the linked account's: where, and its value. */
export interface ExtraCredential {
  in: 'header' | 'query' | 'cookie';
  name: string;
  value: string;
}

/**
 * The credentials an imported operation needs beside the linked account's, when its requirements combine schemes
 * (OpenAPI's security: alternatives, each the schemes it needs together). The configured scheme picks the
 * alternatives that name it (for `no_auth`, an empty requirement); of those the first whose other schemes all
 * have a value in the configuration's `extra_credentials` (by the document's scheme name) is used. None naming
 * the configured scheme: nothing is added, and the configured scheme is sent as for any function. Some naming it
 * but none satisfiable: ExecutionFailure naming what is missing, before anything is sent.
 */
export function extraCredentials(
  functionName: string,
  requirements: SecurityMember[][],
  configured: SecurityScheme,
  given: Readonly<Record<string, string>>,
): ExtraCredential[] {
  const candidates = requirements.filter((members) =>
    configured === 'no_auth' ? members.length === 0 : members.some((member) => member.kind === configured),
  );
  const reasons: string[] = [];
  for (const members of candidates) {
    const extras: ExtraCredential[] = [];
    const missing: string[] = [];
    for (const member of members) {
      if (member.kind === configured) {
        continue;
      }
      const value = given[member.scheme];
      if (member.in === undefined || member.name === undefined) {
        missing.push(`scheme ${member.scheme} (not an apiKey scheme, so Patchbay cannot send it beside another)`);
      } else if (value === undefined) {
        missing.push(`extra_credentials.${member.scheme} (sent as ${member.in} ${member.name})`);
      } else {
        extras.push({ in: member.in, name: member.name, value });
      }
    }
    if (missing.length === 0) {
      return extras;
    }
    reasons.push(`${members.map((member) => member.scheme).join(' + ')} lacks ${missing.join(' and ')}`);
  }
  if (candidates.length === 0) {
    return [];
  }
  throw new ExecutionFailure(
    `${functionName} needs more than the linked account's ${configured} credential, and the app configuration ` +
      `gives too little: ${reasons.join('; or ')}. Set the missing values in the app configuration's extra_credentials.`,
  );
}
