import { describe, expect, it } from 'vitest';
import { loadConfig } from './app-config.js';

describe('TRUST_PROXY', () => {
  it('takes comma-separated addresses and CIDR ranges', () => {
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).TRUST_PROXY).toBe('127.0.0.1, 10.0.0.0/8,::1');
    expect(loadConfig({}).TRUST_PROXY).toBeUndefined();
  });

  it('refuses "trust everyone" and host names, naming the variable', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY="true" is invalid/);
    expect(() => loadConfig({ TRUST_PROXY: 'lb.internal' })).toThrow(/TRUST_PROXY must be comma-separated IP/);
  });
});

describe('AUDIT_RETENTION_DAYS', () => {
  it('is off unless set, and takes a whole number of days', () => {
    expect(loadConfig({}).AUDIT_RETENTION_DAYS).toBeUndefined();
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '90' }).AUDIT_RETENTION_DAYS).toBe(90);
  });

  it('refuses zero, negative and non-numeric values, naming the variable', () => {
    for (const value of ['0', '-5', 'ninety', '1.5']) {
      expect(() => loadConfig({ AUDIT_RETENTION_DAYS: value })).toThrow(/AUDIT_RETENTION_DAYS/);
    }
  });
});

describe('TRACING_SAMPLE_RATIO', () => {
  it('traces every request unless set, and takes a share from 0 to 1', () => {
    expect(loadConfig({}).TRACING_SAMPLE_RATIO).toBe(1);
    expect(loadConfig({ TRACING_SAMPLE_RATIO: '0.25' }).TRACING_SAMPLE_RATIO).toBe(0.25);
    expect(loadConfig({ TRACING_SAMPLE_RATIO: '0' }).TRACING_SAMPLE_RATIO).toBe(0);
  });

  it('refuses values outside 0 to 1 and non-numbers, naming the variable', () => {
    for (const value of ['1.5', '-0.1', 'half', '2']) {
      expect(() => loadConfig({ TRACING_SAMPLE_RATIO: value })).toThrow(/TRACING_SAMPLE_RATIO/);
    }
  });
});

describe('EMBEDDINGS_PROVIDER (removed)', () => {
  it('refuses the removed providers and any other value, naming the setting and what to do', () => {
    for (const value of ['openai', 'local', 'magic']) {
      expect(() => loadConfig({ EMBEDDINGS_PROVIDER: value })).toThrow(
        new RegExp(`EMBEDDINGS_PROVIDER="${value}" is no longer supported: .*unset EMBEDDINGS_PROVIDER`),
      );
    }
  });

  it('still starts when set to the built-in offline model, leftover settings of the removed providers ignored', () => {
    expect(() => loadConfig({ EMBEDDINGS_PROVIDER: 'offline', EMBEDDINGS_API_KEY: 'sk-old' })).not.toThrow();
  });
});
