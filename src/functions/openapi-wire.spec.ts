import { describe, expect, it } from 'vitest';
import { resolveServer, ServerVariableError, serverVariableProblem, type ServerTemplate } from './openapi-wire.js';

describe('server variables', () => {
  const template: ServerTemplate = {
    url: 'https://{tenant}.example.com:{port}/{basePath}',
    variables: {
      tenant: { default: 'demo' },
      port: { default: '443', enum: ['443', '8443'] },
      basePath: { default: 'v2' },
    },
  };

  it('builds the URL from the values given, the defaults for the others', () => {
    expect(resolveServer(template, {})).toBe('https://demo.example.com:443/v2');
    expect(resolveServer(template, { tenant: 'acme', port: '8443', basePath: 'api/v3/' })).toBe(
      'https://acme.example.com:8443/api/v3',
    );
  });

  it('refuses a value outside the enum, or one that would add user info, a query or a fragment', () => {
    expect(() => resolveServer(template, { port: '80' })).toThrow(ServerVariableError);
    expect(() => resolveServer(template, { port: '80' })).toThrow(
      `server variable port: "80" is not one of the values the app's document allows: 443, 8443`,
    );
    for (const value of ['evil.com#', 'me@evil.com', 'a?b=c', 'a b', 'a\\b', 'x\n', 'x'.repeat(256)]) {
      expect(serverVariableProblem(template, 'tenant', value)).toMatch(/^server variable tenant: at most/);
    }
  });

  it('a host pinned by a fixed domain takes any name, but no "/" before the path', () => {
    expect(serverVariableProblem(template, 'tenant', 'acme.eu')).toBeUndefined();
    expect(serverVariableProblem(template, 'tenant', 'evil.com/')).toMatch(/may not contain "\/"/);
    expect(serverVariableProblem(template, 'basePath', 'a/b/c')).toBeUndefined();
  });

  it('a variable that chooses the host freely takes only its enum, else its default', () => {
    for (const url of [
      'https://{host}/api',
      'https://{host}:8443',
      'https://api.{domain}.com/v1',
      '{scheme}://{host}',
    ]) {
      const name = /\{(host|domain)\}/.exec(url)?.[1] as string;
      const free: ServerTemplate = { url, variables: { [name]: { default: 'a' }, scheme: { default: 'https' } } };
      expect(serverVariableProblem(free, name, 'a')).toBeUndefined();
      expect(serverVariableProblem(free, name, 'evil')).toMatch(
        new RegExp(`^server variable ${name}: it chooses the host of .* only its default "a" is allowed`),
      );
    }
    const listed: ServerTemplate = {
      url: 'https://{host}/api',
      variables: { host: { default: 'a', enum: ['a', 'b'] } },
    };
    expect(serverVariableProblem(listed, 'host', 'b')).toBeUndefined();
  });
});
