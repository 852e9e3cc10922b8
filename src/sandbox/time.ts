// The wire's timestamp forms and the sandbox's calendar arithmetic. Zone arithmetic: src/util/time-zone.ts.

const DAY = 86_400_000;
export const HOUR = 3_600_000;
export const MINUTE = 60_000;
export { DAY };

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
