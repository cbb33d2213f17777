import { fullFormats } from 'ajv-formats/dist/formats.js';

type FormatCheck = { validate: (value: string) => boolean } | ((value: string) => boolean);

/** ajv-formats' `date-time`: what an OpenAPI `format: date-time` accepts, checked the way clients check it. */
const dateTimeFormat = fullFormats['date-time'] as FormatCheck;

export function isDateTime(value: unknown): value is string {
  if (typeof value !== 'string') {
    return false;
  }
  return typeof dateTimeFormat === 'function' ? dateTimeFormat(value) : dateTimeFormat.validate(value);
}

const PARTS = /^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?(?:Z|([+-])(\d\d)(?::?(\d\d))?)$/i;

/**
 * The instant an `isDateTime` string names. Written here because JavaScript's own parsing disagrees
 * with RFC 3339 on valid input: `Date.UTC` maps years 0–99 to 1900–1999, and `Date.parse` refuses
 * leap seconds, lower-case `t`/`z`, a space separator and offsets without a colon.
 * A leap second (`:60`) is the first instant of the next minute, as PostgreSQL reads it. A `Date`
 * holds milliseconds: finer fractions are rounded up, so that `>= since` over instants the service
 * recorded (all in milliseconds) answers exactly as the microseconds would.
 */
export function parseDateTime(value: string): Date {
  const parts = PARTS.exec(value);
  if (!parts || !isDateTime(value)) {
    throw new RangeError(`Not an RFC 3339 date-time: ${value}`);
  }
  const [, year, month, day, hour, minute, second, fraction, sign, offsetHours, offsetMinutes] = parts;
  const date = new Date(0);
  date.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  const digits = fraction?.slice(1) ?? '';
  const milliseconds = Number(digits.slice(0, 3).padEnd(3, '0')) + (/[1-9]/.test(digits.slice(3)) ? 1 : 0);
  date.setUTCHours(Number(hour), Number(minute), Number(second), milliseconds);
  if (sign) {
    const offset = (Number(offsetHours) * 60 + Number(offsetMinutes ?? 0)) * 60_000;
    date.setTime(date.getTime() - (sign === '+' ? offset : -offset));
  }
  return date;
}
