// Time zone facts from the runtime's own tz database (Intl), so VTIMEZONE blocks and local times follow the
// ICU data that ships with Node instead of a second, separately updated copy in a package.
//
// Why not a package: the maintained VTIMEZONE packages ship static text per zone generated at publish time
// (with RRULEs for the current rules only) and need updating whenever a government changes its clocks; Node's
// ICU is updated with Node. Here the transitions are computed for exactly the years a feed spans and written as
// explicit observances (one DTSTART each), which every parser understands and which stay right even when the
// rules changed within the window.
import type { ICalTemporalZonedDateTimeStub } from 'ical-generator';

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

/** Throws a clear error for a zone name the runtime does not know. */
export function assertTimeZone(timeZone: string): void {
  try {
    formatter(timeZone);
  } catch {
    throw new Error(`unknown IANA time zone: ${timeZone}`);
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
function intlOffsetMinutes(epochMs: number, timeZone: string): number {
  const w = wallClock(epochMs, timeZone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return Math.round((asUtc - Math.floor(epochMs / 1000) * 1000) / 60_000);
}

// Intl.formatToParts costs microseconds per call; a feed render needs two local times per event. Offsets are
// therefore looked up in a per-zone, per-year table of transitions computed once from Intl.
const yearTables = new Map<string, Map<number, { startOffset: number; changes: Transition[] }>>();

function yearTable(timeZone: string, year: number) {
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

export function formatLocal(w: WallClock): string {
  return `${pad(w.year, 4)}${pad(w.month)}${pad(w.day)}T${pad(w.hour)}${pad(w.minute)}${pad(w.second)}`;
}

function formatOffset(min: number): string {
  const sign = min < 0 ? '-' : '+';
  const a = Math.abs(min);
  return `${sign}${pad(Math.floor(a / 60))}${pad(a % 60)}`;
}

// --- a Temporal.ZonedDateTime look-alike, the "zoned date object" ical-generator formats correctly -----------
// ical-generator 11 writes a native Date with a TZID in the *server's* local time; with a zoned object it asks
// the object for its wall-clock fields. These stubs implement exactly the duck type it documents
// (ICalTemporalZonedDateTimeStub / ICalTemporalPlainDateTimeStub).

interface PlainStub extends WallClock {
  toZonedDateTime(timeZone: string): ICalTemporalZonedDateTimeStub;
  toPlainDate(): { year: number; month: number; day: number };
  toString(): string;
  toJSON(): string;
}

function plainStub(epochMs: number, w: WallClock): PlainStub {
  return {
    year: w.year,
    month: w.month,
    day: w.day,
    hour: w.hour,
    minute: w.minute,
    second: w.second,
    toZonedDateTime: (tz: string) => zonedDate(epochMs, tz),
    toPlainDate: () => ({ year: w.year, month: w.month, day: w.day }),
    toString: () => formatLocal(w),
    toJSON: () => formatLocal(w),
  };
}

/** The instant as a zoned date object that ical-generator writes as `TZID=<zone>:<local time>`. */
export function zonedDate(instant: string | number | Date, timeZone: string): ICalTemporalZonedDateTimeStub {
  const epochMs = typeof instant === 'number' ? instant : new Date(instant).getTime();
  return new ZonedStub(epochMs, timeZone) as unknown as ICalTemporalZonedDateTimeStub;
}

class ZonedStub {
  readonly epochMs: number;
  readonly timeZoneId: string;
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;

  constructor(epochMs: number, timeZone: string) {
    const w = timeZone === 'UTC' ? utcClock(epochMs) : localClock(epochMs, timeZone);
    this.epochMs = epochMs;
    this.timeZoneId = timeZone;
    this.year = w.year;
    this.month = w.month;
    this.day = w.day;
    this.hour = w.hour;
    this.minute = w.minute;
    this.second = w.second;
  }
  withTimeZone(tz: string): ZonedStub {
    return tz === this.timeZoneId ? this : new ZonedStub(this.epochMs, tz);
  }
  toPlainDateTime(): PlainStub {
    return plainStub(this.epochMs, this);
  }
  toInstant() {
    const epochMilliseconds = this.epochMs;
    return { epochMilliseconds, toString: () => new Date(epochMilliseconds).toISOString() };
  }
  toString(): string {
    return `${new Date(this.epochMs).toISOString()}[${this.timeZoneId}]`;
  }
  toJSON(): string {
    return this.toString();
  }
}

function utcClock(epochMs: number): WallClock {
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

// --- VTIMEZONE --------------------------------------------------------------------------------------------

export interface Transition {
  /** The instant the new offset starts. */
  atMs: number;
  fromMin: number;
  toMin: number;
}

const DAY = 86_400_000;

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

const shortNames = new Map<string, Intl.DateTimeFormat>();

function zoneAbbreviation(epochMs: number, timeZone: string): string {
  let f = shortNames.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, timeZoneName: 'short' });
    shortNames.set(timeZone, f);
  }
  return f.formatToParts(epochMs).find((p) => p.type === 'timeZoneName')?.value ?? '';
}

const vtimezoneCache = new Map<string, string>();

/**
 * A VTIMEZONE for the zone covering whole calendar years fromYear..toYear: a first observance at the start of
 * fromYear, then one observance per offset change. DAYLIGHT is any offset above the lowest one in the span.
 */
export function vtimezone(timeZone: string, fromYear: number, toYear: number): string {
  const key = `${timeZone}|${fromYear}|${toYear}`;
  const cached = vtimezoneCache.get(key);
  if (cached) return cached;
  const fromMs = Date.UTC(fromYear, 0, 1) - DAY;
  const toMs = Date.UTC(toYear + 1, 0, 1) + DAY;
  const changes = transitions(timeZone, fromMs, toMs, intlOffsetMinutes);
  const firstOff = intlOffsetMinutes(fromMs, timeZone);
  const standard = Math.min(firstOff, ...changes.map((c) => c.toMin));
  const lines = ['BEGIN:VTIMEZONE', `TZID:${timeZone}`, `X-LIC-LOCATION:${timeZone}`];
  const observance = (startMs: number, from: number, to: number) => {
    const kind = to > standard ? 'DAYLIGHT' : 'STANDARD';
    // DTSTART of an observance is the local time just before the change, i.e. in the old offset.
    const local = utcClock(startMs + from * 60_000);
    const name = zoneAbbreviation(startMs, timeZone);
    lines.push(
      `BEGIN:${kind}`,
      `DTSTART:${formatLocal(local)}`,
      `TZOFFSETFROM:${formatOffset(from)}`,
      `TZOFFSETTO:${formatOffset(to)}`,
      ...(name ? [`TZNAME:${name}`] : []),
      `END:${kind}`,
    );
  };
  observance(fromMs, firstOff, firstOff);
  for (const c of changes) observance(c.atMs, c.fromMin, c.toMin);
  lines.push('END:VTIMEZONE');
  const text = lines.join('\r\n');
  if (vtimezoneCache.size > 200) vtimezoneCache.clear();
  vtimezoneCache.set(key, text);
  return text;
}
