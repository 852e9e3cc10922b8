// Time-zone arithmetic from the runtime's own tz database (Intl): wall clocks, UTC offsets, the instants where
// offsets change, abbreviations, and wall-clock times back to instants. One module for the service (feeds,
// rosters, the CLI) and the sandbox alike. No package: Node's ICU data is updated with Node, while the tz
// packages ship a second copy that must be updated separately.
const formatters = new Map<string, Intl.DateTimeFormat>();

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

/** True when the runtime knows the IANA zone name. */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function wallClock(epochMs: number, timeZone: string): WallClock {
  const out: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(epochMs)) {
    if (p.type !== 'literal') out[p.type] = Number(p.value);
  }
  return {
    year: out.year ?? 1970,
    month: out.month ?? 1,
    day: out.day ?? 1,
    hour: out.hour ?? 0,
    minute: out.minute ?? 0,
    second: out.second ?? 0,
  };
}

/** UTC offset in minutes (east positive) at an instant, straight from Intl. */
export function intlOffsetMinutes(epochMs: number, timeZone: string): number {
  const w = wallClock(epochMs, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

// Intl.formatToParts costs microseconds per call; a feed render needs two local times per event. Offsets are
// therefore looked up in a per-zone, per-year table of transitions computed once from Intl.
const yearTables = new Map<string, Map<number, { startOffset: number; changes: Transition[] }>>();

/** The zone's offset at the start of a UTC year and its changes within it (computed once per zone and year). */
export function yearTable(timeZone: string, year: number): { startOffset: number; changes: Transition[] } {
  let zone = yearTables.get(timeZone);
  if (!zone) {
    zone = new Map();
    yearTables.set(timeZone, zone);
  }
  let t = zone.get(year);
  if (!t) {
    const from = Date.UTC(year, 0, 1);
    const to = Date.UTC(year + 1, 0, 1);
    t = {
      startOffset: intlOffsetMinutes(from, timeZone),
      changes: transitions(timeZone, from, to, intlOffsetMinutes),
    };
    zone.set(year, t);
  }
  return t;
}

/** UTC offset in minutes (east positive) at an instant. */
export function offsetMinutes(epochMs: number, timeZone: string): number {
  const table = yearTable(timeZone, new Date(epochMs).getUTCFullYear());
  let offset = table.startOffset;
  for (const c of table.changes) {
    if (c.atMs > epochMs) break;
    offset = c.toMin;
  }
  return offset;
}

/** The school-local wall clock at an instant (whole seconds). */
export function localClock(epochMs: number, timeZone: string): WallClock {
  return utcClock(epochMs + offsetMinutes(epochMs, timeZone) * 60_000);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** The UTC wall clock of an instant (whole seconds). */
export function utcClock(epochMs: number): WallClock {
  const d = new Date(epochMs);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

export interface Transition {
  /** The instant the new offset starts. */
  atMs: number;
  fromMin: number;
  toMin: number;
}

export const DAY = 86_400_000;

/** Offset changes in [fromMs, toMs), found by daily sampling and bisection to the minute. */
export function transitions(
  timeZone: string,
  fromMs: number,
  toMs: number,
  offsetAt: (ms: number, tz: string) => number = offsetMinutes,
): Transition[] {
  const out: Transition[] = [];
  let prevMs = fromMs;
  let prevOff = offsetAt(prevMs, timeZone);
  for (let t = fromMs + DAY; t <= toMs + DAY; t += DAY) {
    const off = offsetAt(t, timeZone);
    if (off !== prevOff) {
      let lo = prevMs;
      let hi = t;
      while (hi - lo > 60_000) {
        const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
        if (offsetAt(mid, timeZone) === prevOff) lo = mid;
        else hi = mid;
      }
      if (hi < toMs) out.push({ atMs: hi, fromMin: prevOff, toMin: off });
      prevOff = off;
    }
    prevMs = t;
  }
  return out;
}

// TZNAME: the zone's own abbreviation (AEST, BST, EDT, LHDT…). ICU gives real abbreviations only in locales
// where they are in common use (en-AU knows AEST, en-GB knows BST, en-US knows EDT), and "GMT+11" elsewhere;
// so several English locales are asked and the first real abbreviation wins. Zones that have none (most of
// Asia, South America) get the tz database's own convention, the numeric offset: "+07", "+0530".
const NAME_LOCALES = ['en-GB', 'en-US', 'en-AU', 'en-NZ', 'en-CA', 'en-IN', 'en-IE', 'en-ZA'];
const shortNames = new Map<string, Intl.DateTimeFormat>();

export function zoneAbbreviation(epochMs: number, timeZone: string): string {
  for (const locale of NAME_LOCALES) {
    const key = `${locale}|${timeZone}`;
    let f = shortNames.get(key);
    if (!f) {
      f = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' });
      shortNames.set(key, f);
    }
    const name = f.formatToParts(epochMs).find((p) => p.type === 'timeZoneName')?.value ?? '';
    if (/^[A-Z]{2,6}$/.test(name)) return name;
  }
  const off = intlOffsetMinutes(epochMs, timeZone);
  const a = Math.abs(off);
  return `${off < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}${a % 60 ? pad(a % 60) : ''}`;
}

const HOUR = 3_600_000;

/** The UTC instant of a wall-clock time in a zone (the day is given as a UTC-midnight instant of that date). */
export function wallToUtc(dayUtcMidnight: number, hour: number, minute: number, timeZone: string): number {
  const naive = dayUtcMidnight + hour * HOUR + minute * 60_000;
  let utc = naive - offsetMinutes(naive, timeZone) * 60_000;
  utc = naive - offsetMinutes(utc, timeZone) * 60_000;
  return utc;
}

/** `HH:mm` of an instant in a zone. */
export function hourMinute(epochMs: number, timeZone: string): string {
  const w = localClock(epochMs, timeZone);
  return `${pad(w.hour)}:${pad(w.minute)}`;
}

/** Whether the wall time of `epochMs` also names another instant (the repeated hour when clocks go back). */
export function isAmbiguousWallTime(epochMs: number, timeZone: string): boolean {
  const wall = hourMinute(epochMs, timeZone);
  const day = localClock(epochMs, timeZone).day;
  // Every zone's shifts are whole or half hours.
  return [-HOUR, -HOUR / 2, HOUR / 2, HOUR].some(
    (d) => hourMinute(epochMs + d, timeZone) === wall && localClock(epochMs + d, timeZone).day === day,
  );
}

/**
 * "15:30–16:30"; with each end's zone abbreviation when the wall times alone would mislead: an end in the repeated
 * hour (two 02:30s on the night clocks go back) or a range across a change ("02:30 AEDT–02:00 AEST", not a
 * session that seems to end before it starts). `format` gives an instant's wall time.
 */
export function wallTimeRange(
  startMs: number,
  endMs: number,
  timeZone: string,
  format: (epochMs: number) => string,
): string {
  const marked =
    offsetMinutes(startMs, timeZone) !== offsetMinutes(endMs, timeZone) ||
    isAmbiguousWallTime(startMs, timeZone) ||
    isAmbiguousWallTime(endMs, timeZone);
  const at = (t: number) => (marked ? `${format(t)} ${zoneAbbreviation(t, timeZone)}` : format(t));
  return `${at(startMs)}\u2013${at(endMs)}`;
}

/** How many days the month has (1-12) in that year; 0 for a month that does not exist. */
export function daysInMonth(year: number, month: number): number {
  if (!Number.isInteger(month) || month < 1 || month > 12) return 0;
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Whether a written `YYYY-MM-DD` is a day of the calendar (Date.parse rolls 30 February over to 2 March). */
export function realDay(ymd: string): boolean {
  const [y, m, d] = ymd.split('-').map(Number) as [number, number, number];
  return Number.isInteger(d) && d >= 1 && d <= daysInMonth(y, m);
}
