import { RequestValidationError, type ValidationIssue } from '../../libs/common/src/index.js';
import type { FunctionsRepository } from '../functions/functions.repository.js';
import { serverVariableProblem } from '../functions/openapi-wire.js';

/*
 * What an app's OpenAPI documents let a configuration choose beside the scheme: values of the servers'
 * variables and the extra credentials of combined security requirements, each checked against what the
 * app's functions declare (422 naming each field otherwise).
 */

/**
 * Server variable values as given, once each is known to be a string naming a variable that the app's
 * functions declare, and one that every server declaring it takes; else 422 listing each problem with its field.
 */
export async function checkServerVariables(
  functions: FunctionsRepository,
  appName: string,
  given: Record<string, unknown> | undefined,
): Promise<Record<string, string>> {
  const entries = Object.entries(given ?? {});
  if (entries.length === 0) {
    return {};
  }
  const templates = await functions.serverTemplatesOfApp(appName);
  const known = [...new Set(templates.flatMap((template) => Object.keys(template.variables)))].sort();
  const issues: ValidationIssue[] = [];
  for (const [name, value] of entries) {
    const loc = ['body', 'server_variables', name];
    const declaring = templates.filter((template) => name in template.variables);
    if (declaring.length === 0) {
      const offered = known.length > 0 ? `it declares: ${known.join(', ')}` : 'it declares none';
      issues.push({ loc, type: 'value_error', msg: `App ${appName} has no server variable ${name}; ${offered}` });
    } else if (typeof value !== 'string') {
      issues.push({ loc, type: 'string_type', msg: 'Input should be a valid string' });
    } else {
      const problem = declaring.map((template) => serverVariableProblem(template, name, value)).find(Boolean);
      if (problem !== undefined) {
        issues.push({ loc, type: 'value_error', msg: problem });
      }
    }
  }
  if (issues.length > 0) {
    throw new RequestValidationError(issues);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

/**
 * Extra credentials as given, once each names an apiKey scheme that some function of the app combines with
 * another and is a non-empty string without control characters; else 422 naming each. Undefined when empty.
 */
export async function checkExtraCredentials(
  functions: FunctionsRepository,
  appName: string,
  given: Record<string, unknown> | undefined,
): Promise<Record<string, string> | undefined> {
  const entries = Object.entries(given ?? {});
  if (entries.length === 0) {
    return undefined;
  }
  const known = await functions.extraCredentialSchemesOfApp(appName);
  const issues: ValidationIssue[] = [];
  for (const [name, value] of entries) {
    const loc = ['body', 'extra_credentials', name];
    if (!known.includes(name)) {
      const offered = known.length > 0 ? `those it takes: ${known.join(', ')}` : 'it takes none';
      issues.push({
        loc,
        type: 'value_error',
        msg: `No function of app ${appName} combines scheme ${name} with another; ${offered}`,
      });
    } else if (typeof value !== 'string' || value.length === 0 || value.length > 4096) {
      issues.push({ loc, type: 'string_type', msg: 'Input should be a string of 1 to 4096 characters' });
    } else if (/\p{Cc}/u.test(value)) {
      issues.push({ loc, type: 'value_error', msg: 'Input should have no control characters' });
    }
  }
  if (issues.length > 0) {
    throw new RequestValidationError(issues);
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
