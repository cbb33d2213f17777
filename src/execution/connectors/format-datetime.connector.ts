import { type Connector, ConnectorError } from './connector.js';

interface FormatDatetimeInput {
  timestamp: string;
  time_zone: string;
  locale?: string;
}

export interface FormatDatetimeResult {
  /** The date and time written out for the locale, in the time zone. */
  formatted: string;
  /** The canonical IANA name of the time zone. */
  time_zone: string;
  /** The same instant as ISO 8601 local time with the zone's UTC offset, e.g. 2025-06-03T16:30:00+02:00. */
  iso: string;
  /** The zone's UTC offset at that instant, e.g. +02:00. */
  utc_offset: string;
}

/** Dates with optional time and offset; a time without an offset is read as UTC. */
const ISO_8601 = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** PATCHBAY_UTILS__FORMAT_DATETIME: converts an instant to a time zone and formats it, with Intl. */
export const formatDatetimeConnector: Connector = {
  functionName: 'PATCHBAY_UTILS__FORMAT_DATETIME',
  run(input: Record<string, unknown>): FormatDatetimeResult {
    const { timestamp, time_zone: timeZone, locale = 'en-US' } = input as unknown as FormatDatetimeInput;
    const instant = parseInstant(timestamp);
    let formatter: Intl.DateTimeFormat;
    try {
      formatter = new Intl.DateTimeFormat(locale, { dateStyle: 'full', timeStyle: 'long', timeZone });
    } catch (error) {
      throw new ConnectorError(
        error instanceof RangeError && /time ?zone/i.test(error.message)
          ? `Unknown time zone "${timeZone}": use an IANA name such as Europe/Paris`
          : `Unknown locale "${locale}": use a BCP 47 tag such as en-US`,
      );
    }
    const zone = formatter.resolvedOptions().timeZone;
    const offset = utcOffset(instant, zone);
    return {
      formatted: formatter.format(instant),
      time_zone: zone,
      iso: localIso(instant, zone, offset),
      utc_offset: offset,
    };
  },
};

function parseInstant(timestamp: string): Date {
  const match = ISO_8601.exec(timestamp.trim());
  if (!match) {
    throw new ConnectorError(`timestamp "${timestamp}" is not an ISO 8601 date/time such as 2025-06-03T14:30:00Z`);
  }
  const [, date, time, offset] = match;
  const instant = new Date(time ? `${date}T${time}${offset ?? 'Z'}` : `${date}T00:00:00Z`);
  if (Number.isNaN(instant.getTime())) {
    throw new ConnectorError(`timestamp "${timestamp}" is not a valid date/time`);
  }
  return instant;
}

/** `+02:00`, `-05:00`, `+05:45`, `+00:00`. */
function utcOffset(instant: Date, timeZone: string): string {
  const name = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' })
    .formatToParts(instant)
    .find((part) => part.type === 'timeZoneName')?.value;
  const match = /GMT([+-]\d{2}):?(\d{2})?/.exec(name ?? '');
  return match ? `${match[1]}:${match[2] ?? '00'}` : '+00:00';
}

function localIso(instant: Date, timeZone: string, offset: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  const millis = instant.getUTCMilliseconds();
  const fraction = millis ? `.${String(millis).padStart(3, '0')}` : '';
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${fraction}${offset}`;
}
