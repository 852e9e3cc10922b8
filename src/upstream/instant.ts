// Upstream timestamps arrive in several shapes: ISO 8601 with `Z` or an offset, `YYYY-MM-DD HH:mm:ss` without a
// zone (pre-explained absences), with or without milliseconds. The spec says every returned timestamp is UTC, so a
// value without a zone is read as UTC — never as the server's local time, which is what `new Date('… …')` would do.
import type { Instant } from '../domain/types.ts';

const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** The canonical `YYYY-MM-DDTHH:mm:ss.sssZ` form of an upstream timestamp, or null when it is not one. */
export function toInstant(value: string | number): Instant | null {
  if (typeof value === 'number') {
    // Epoch milliseconds: not documented, but unambiguous when it occurs.
    if (!Number.isFinite(value)) return null;
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  const m = PATTERN.exec(value.trim());
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  let ms = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  // Date.UTC rolls 31 February over into March: a day the month does not have is not a timestamp.
  if (new Date(ms).getUTCDate() !== day) return null;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    ms -= sign * offsetMinutes * 60_000;
  }
  return new Date(ms).toISOString();
}

/** `YYYY-MM-DD HH:mm:ss` in UTC: the form the session write examples use. */
export function toWireDateTime(value: string, field: string): string {
  const instant = toInstant(value);
  if (instant === null) throw new TypeError(`${field} is not an ISO 8601 date-time`);
  return `${instant.slice(0, 10)} ${instant.slice(11, 19)}`;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `value` is already canonical (`toInstant(value) === value`), decided by character arithmetic alone: it
 * runs for every timestamp of every well-formed record, so it avoids the regex and Date round trip.
 */
export function isCanonicalInstant(value: unknown): boolean {
  if (typeof value !== 'string' || value.length !== 24) return false;
  const c = (i: number) => value.charCodeAt(i) - 48;
  const digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22];
  for (const i of digits) {
    const d = c(i);
    if (d < 0 || d > 9) return false;
  }
  if (
    value[4] !== '-' ||
    value[7] !== '-' ||
    value[10] !== 'T' ||
    value[13] !== ':' ||
    value[16] !== ':' ||
    value[19] !== '.' ||
    value[23] !== 'Z'
  ) {
    return false;
  }
  const year = c(0) * 1000 + c(1) * 100 + c(2) * 10 + c(3);
  const month = c(5) * 10 + c(6);
  const day = c(8) * 10 + c(9);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const maxDay = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
  return day <= maxDay && c(11) * 10 + c(12) <= 23 && c(14) * 10 + c(15) <= 59 && c(17) * 10 + c(18) <= 59;
}
