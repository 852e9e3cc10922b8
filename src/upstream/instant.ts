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
