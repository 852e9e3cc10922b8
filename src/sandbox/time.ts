// Time helpers: wall-clock times in the school's zone to UTC instants, and the wire's timestamp forms.

const DAY = 86_400_000;
export const HOUR = 3_600_000;
export const MINUTE = 60_000;
export { DAY };

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, number>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Offset (ms) of the zone from UTC at an instant: local = utc + offset. */
export function zoneOffset(instant: number, timeZone: string): number {
  // Offsets change at most at hour boundaries; cache per zone and hour.
  const key = `${timeZone}|${Math.floor(instant / HOUR)}`;
  const cached = offsetCache.get(key);
  if (cached !== undefined) return cached;
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const asUtc = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  const offset = asUtc - Math.floor(instant / 1000) * 1000;
  offsetCache.set(key, offset);
  return offset;
}

/** The UTC instant of a wall-clock time in a zone (the day is given as a UTC-midnight instant of that date). */
export function wallToUtc(dayUtcMidnight: number, hour: number, minute: number, timeZone: string): number {
  const naive = dayUtcMidnight + hour * HOUR + minute * MINUTE;
  let utc = naive - zoneOffset(naive, timeZone);
  utc = naive - zoneOffset(utc, timeZone);
  return utc;
}

/** `HH:mm` of an instant in a zone. */
export function wallClock(instant: number, timeZone: string): string {
  const local = new Date(instant + zoneOffset(instant, timeZone));
  return `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}`;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** `YYYY-MM-DD HH:mm:ss` in UTC, the form pre-explained absences' `startDate` comes back in. */
export function sqlDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * Parses a timestamp as the service accepts it: ISO 8601, or `YYYY-MM-DD HH:mm:ss` / `YYYY-MM-DD` taken as UTC.
 * Returns null when it is not a timestamp.
 */
export function parseInstant(text: string): number | null {
  const t = text.trim();
  if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return null;
  let candidate = t;
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) candidate = `${t}T00:00:00Z`;
  else if (/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(t))
    candidate = `${t.replace(' ', 'T')}Z`;
  const ms = Date.parse(candidate);
  return Number.isNaN(ms) ? null : ms;
}

/** Adds calendar months in UTC (clamping the day), as "six months after now" means. */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, last));
  return d.getTime();
}
