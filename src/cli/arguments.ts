import { InvalidArgumentError } from 'commander';
import ms, { type StringValue } from 'ms';
import { isDateTime, parseDateTime } from '../../libs/common/src/index.js';

/** Parsers of option values: a wrong value is a usage error (exit 2) naming the option and the reason. */

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError('must be a positive integer');
  }
  return n;
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError('must be an integer from 0 to 65535');
  }
  return port;
}

/** A duration with its unit (`ms` package: 90s, 30m, 12h, 30d, 1y); a bare number is refused as ambiguous. */
export function parseDuration(value: string): number {
  const milliseconds = /[a-z]\s*$/i.test(value) ? ms(value as StringValue) : undefined;
  if (milliseconds === undefined || !Number.isFinite(milliseconds) || milliseconds <= 0) {
    throw new InvalidArgumentError('must be a positive duration with a unit, e.g. 30d, 12h or 90m');
  }
  return milliseconds;
}

export function parseDateTimeOption(value: string): Date {
  if (!isDateTime(value)) {
    throw new InvalidArgumentError('must be an RFC 3339 date-time, e.g. 2027-01-31T00:00:00Z');
  }
  return parseDateTime(value);
}

/** A repeatable option: each occurrence adds its value. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
