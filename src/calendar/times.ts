// A session's times on the school's wall clock, as every output prints them (landing and family pages, /staff,
// PDFs, `rostercal sessions`): one rule, so the two 02:30s of the night clocks go back read the same everywhere.
import { wallTimeRange, zoneAbbreviation } from '../util/time-zone.ts';

interface Formats {
  time: Intl.DateTimeFormat;
  day: Intl.DateTimeFormat;
  ymd: Intl.DateTimeFormat;
}

const formats = new Map<string, Formats>();

function formatsFor(locale: string, timeZone: string): Formats {
  const key = `${locale}|${timeZone}`;
  let f = formats.get(key);
  if (!f) {
    f = {
      time: new Intl.DateTimeFormat(locale, {
        timeZone,
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      }),
      day: new Intl.DateTimeFormat(locale, { timeZone, weekday: 'short', day: 'numeric', month: 'short' }),
      ymd: new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }),
    };
    formats.set(key, f);
  }
  return f;
}

/**
 * "15:30–16:30" in the school's zone; each end with its zone's abbreviation where the wall times alone would
 * mislead (an end in the repeated hour, a range across a clock change: util/time-zone.ts `wallTimeRange`); a
 * session that ends on a later day names that day ("18:00–Sun 5 Apr 01:00").
 */
export function sessionTimeRange(start: string, end: string, timeZone: string, locale = 'en-GB'): string {
  const f = formatsFor(locale, timeZone);
  const startMs = Date.parse(start);
  const endMs = Date.parse(end);
  if (f.ymd.format(startMs) === f.ymd.format(endMs))
    return wallTimeRange(startMs, endMs, timeZone, (t) => f.time.format(t));
  return wallTimeRange(startMs, endMs, timeZone, (t) =>
    t === endMs ? `${f.day.format(t)} ${f.time.format(t)}` : f.time.format(t),
  );
}

/** The day a session starts on the school's calendar, `YYYY-MM-DD`. */
export function sessionDate(start: string, timeZone: string): string {
  return formatsFor('en-GB', timeZone).ymd.format(Date.parse(start));
}

/**
 * The same range, always naming the zone ("15:30–16:30 AEDT"): for a terminal, whose reader may sit in
 * another zone than the school's; a range that already names its zones is left as it is.
 */
export function sessionTimeRangeZoned(
  start: string,
  end: string,
  timeZone: string,
  locale = 'en-GB',
): string {
  const range = sessionTimeRange(start, end, timeZone, locale);
  const abbr = zoneAbbreviation(Date.parse(start), timeZone);
  return range.includes(abbr) ? range : `${range} ${abbr}`;
}

const dayNames = new Map<string, Intl.DateTimeFormat>();

/**
 * The day a session starts, named in the page's locale: "Tue 3 Mar" (short) or "Tuesday 3 March" (long). Pages
 * name a day per session, so the formatter of each locale, zone and length is made once: a new
 * Intl.DateTimeFormat and its first format took ~2 ms, a format alone ~0.03 ms (measured on the loaded 2-core
 * machine), and the landing pages made three per session. Locales come from the configuration (templates), so the
 * map stays small.
 */
export function sessionDay(
  start: string,
  timeZone: string,
  locale: string,
  length: 'short' | 'long',
): string {
  const key = `${locale}|${timeZone}|${length}`;
  let f = dayNames.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { timeZone, weekday: length, day: 'numeric', month: length });
    dayNames.set(key, f);
  }
  return f.format(Date.parse(start));
}

const startLines = new Map<string, Intl.DateTimeFormat>();

/**
 * When a session starts, day and time in one: "Mon 2 Mar, 15:30" (a landing page's "Next:" line). 24-hour as
 * every other time of a page, whatever the locale's habit (en-US would say "03:30 PM" beside the list's "15:30").
 * Made once per locale and zone, as sessionDay's formatters are: a landing page made a new one per request.
 */
export function sessionStart(start: string, timeZone: string, locale: string): string {
  const key = `${locale}|${timeZone}`;
  let f = startLines.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, {
      timeZone,
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    startLines.set(key, f);
  }
  return f.format(Date.parse(start));
}

const zoneNames = new Map<string, Intl.DateTimeFormat>();

/** The zone's short name in the locale at an instant ("AEDT", or "GMT+11" where the locale has no name for it). */
export function zoneShortName(timeZone: string, at: Date, locale: string): string | undefined {
  const key = `${locale}|${timeZone}`;
  let f = zoneNames.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { timeZone, timeZoneName: 'short' });
    zoneNames.set(key, f);
  }
  return f.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value;
}
