// Time zones as iCalendar writes them: VTIMEZONE blocks and the zoned date objects ical-generator formats as
// TZID-local times. The arithmetic underneath is src/util/time-zone.ts (Intl's own tz database).
//
// Why not a package: the maintained VTIMEZONE packages ship static text per zone generated at publish time
// (with RRULEs for the current rules only) and need updating whenever a government changes its clocks; Node's
// ICU is updated with Node. Here the transitions are computed for exactly the years a feed spans and written as
// explicit observances (one DTSTART each), which every parser understands and which stay right even when the
// rules changed within the window.
import type { ICalTemporalZonedDateTimeStub } from 'ical-generator';
import { LRUCache } from 'lru-cache';
import {
  DAY,
  intlOffsetMinutes,
  localClock,
  offsetMinutes,
  type Transition,
  transitions,
  utcClock,
  type WallClock,
  yearTable,
  zoneAbbreviation,
} from '../util/time-zone.ts';

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

// --- VTIMEZONE --------------------------------------------------------------------------------------------

/**
 * True when the school-local wall clock of this instant names only this instant. Inside the repeated hour
 * when clocks go back, a local time means two instants and clients pick either (an hour apart): such times
 * are written in UTC form instead.
 */
export function isUnambiguousLocal(epochMs: number, timeZone: string): boolean {
  const off = offsetMinutes(epochMs, timeZone);
  const wall = epochMs + off * 60_000;
  for (const other of new Set([
    offsetMinutes(epochMs - DAY, timeZone),
    offsetMinutes(epochMs + DAY, timeZone),
  ])) {
    if (other !== off && offsetMinutes(wall - other * 60_000, timeZone) === other) return false;
  }
  return true;
}

const vtimezoneCache = new LRUCache<string, string>({ max: 200 });

interface YearlyRule {
  month: number;
  /** RRULE BYDAY, e.g. `1SU`, `2SU`, `-1SU`. */
  byDay: string;
  /** Local time of the change in the old offset, e.g. `020000`. */
  time: string;
  fromMin: number;
  toMin: number;
}

const DAY_CODES = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];

/** The ways a change on this local date can be named by a yearly rule: nth weekday of the month, or last. */
function ruleCandidates(t: Transition): YearlyRule[] {
  const local = utcClock(t.atMs + t.fromMin * 60_000);
  const dow = DAY_CODES[new Date(Date.UTC(local.year, local.month - 1, local.day)).getUTCDay()]!;
  const daysInMonth = new Date(Date.UTC(local.year, local.month, 0)).getUTCDate();
  const time = formatLocal(local).slice(9);
  const base = { month: local.month, time, fromMin: t.fromMin, toMin: t.toMin };
  const out: YearlyRule[] = [];
  if (local.day <= 28) out.push({ ...base, byDay: `${Math.ceil(local.day / 7)}${dow}` });
  if (local.day + 7 > daysInMonth) out.push({ ...base, byDay: `-1${dow}` });
  return out;
}

/**
 * The zone's changes as yearly rules when every year of [fromYear, toYear] changes the same way (same count,
 * month, weekday rule, time and offsets); null when the zone has no changes or its rule is irregular there.
 */
function regularRules(
  timeZone: string,
  fromYear: number,
  toYear: number,
): { rules: YearlyRule[]; first: Transition[] } | null {
  const perYear: Transition[][] = [];
  for (let y = fromYear; y <= toYear; y++) perYear.push(yearTable(timeZone, y).changes);
  const count = perYear[0]!.length;
  if (count === 0 || perYear.some((changes) => changes.length !== count)) return null;
  const same = (a: YearlyRule, b: YearlyRule) =>
    a.month === b.month &&
    a.byDay === b.byDay &&
    a.time === b.time &&
    a.fromMin === b.fromMin &&
    a.toMin === b.toMin;
  const rules: YearlyRule[] = [];
  for (let k = 0; k < count; k++) {
    let common = ruleCandidates(perYear[0]![k]!);
    for (const changes of perYear.slice(1)) {
      const cands = ruleCandidates(changes[k]!);
      common = common.filter((r) => cands.some((c) => same(r, c)));
    }
    // In a short span "4th Sunday" and "last Sunday" may both fit; the years after it tell the zone's real
    // rule apart (as long as it lasts), and "last" is preferred when still in doubt.
    for (let y = toYear + 1; y <= toYear + 7 && common.length > 1; y++) {
      const next = yearTable(timeZone, y).changes[k];
      if (!next || yearTable(timeZone, y).changes.length !== count) break;
      const cands = ruleCandidates(next);
      const narrowed = common.filter((r) => cands.some((c) => same(r, c)));
      if (narrowed.length) common = narrowed;
    }
    const rule = common.find((r) => r.byDay.startsWith('-')) ?? common[0];
    if (!rule) return null;
    rules.push(rule);
  }
  return { rules, first: perYear[0]! };
}

/**
 * A VTIMEZONE for the zone covering whole calendar years fromYear..toYear. Where the zone changes the same
 * way every year (the usual case), one STANDARD and one DAYLIGHT observance with a yearly RRULE, anchored in
 * the year before fromYear so every instant of the span follows an onset: parsers that cannot handle long
 * lists of dated observances (ruby-icalendar before 2.10.1) read these. Where the rules change within the span
 * (a country adopting or dropping daylight saving), one dated observance per change, which stays exact.
 * DAYLIGHT is any offset above the lowest one in the span.
 */
export function vtimezone(timeZone: string, fromYear: number, toYear: number): string {
  const key = `${timeZone}|${fromYear}|${toYear}`;
  const cached = vtimezoneCache.get(key);
  if (cached) return cached;
  const lines = ['BEGIN:VTIMEZONE', `TZID:${timeZone}`, `X-LIC-LOCATION:${timeZone}`];
  const observance = (startMs: number, from: number, to: number, standard: number, rrule?: string) => {
    const kind = to > standard ? 'DAYLIGHT' : 'STANDARD';
    // DTSTART of an observance is the local time just before the change, i.e. in the old offset.
    const local = utcClock(startMs + from * 60_000);
    lines.push(
      `BEGIN:${kind}`,
      `DTSTART:${formatLocal(local)}`,
      ...(rrule ? [`RRULE:${rrule}`] : []),
      `TZOFFSETFROM:${formatOffset(from)}`,
      `TZOFFSETTO:${formatOffset(to)}`,
      `TZNAME:${zoneAbbreviation(startMs, timeZone)}`,
      `END:${kind}`,
    );
  };
  const regular = regularRules(timeZone, fromYear - 1, toYear);
  if (regular) {
    const standard = Math.min(...regular.rules.map((r) => r.toMin));
    regular.rules.forEach((r, k) => {
      const rrule = `FREQ=YEARLY;BYMONTH=${r.month};BYDAY=${r.byDay}`;
      observance(regular.first[k]!.atMs, r.fromMin, r.toMin, standard, rrule);
    });
  } else {
    const fromMs = Date.UTC(fromYear, 0, 1) - DAY;
    const toMs = Date.UTC(toYear + 1, 0, 1) + DAY;
    const changes = transitions(timeZone, fromMs, toMs, intlOffsetMinutes);
    const firstOff = intlOffsetMinutes(fromMs, timeZone);
    const standard = Math.min(firstOff, ...changes.map((c) => c.toMin));
    observance(fromMs, firstOff, firstOff, standard);
    for (const c of changes) observance(c.atMs, c.fromMin, c.toMin, standard);
  }
  lines.push('END:VTIMEZONE');
  const text = lines.join('\r\n');
  vtimezoneCache.set(key, text);
  return text;
}
