// CalendarEvent[] → iCalendar text with ical-generator. Formatting only: what an event says was decided by the
// projection. The facts this file honours (PRODUCT.md): the UID is always passed; dates are zoned objects
// (a native Date with a TZID would be written in the server's local time); the calendar's own name and
// description are escaped here because ical-generator does not; no METHOD; a VTIMEZONE for the school's zone;
// Google ignores feeds over about 1 MB, so the farthest future events are left out past maxBytes and the
// calendar description says until when the feed is complete; the bytes counted include the alarms a reminder
// variant adds to every event that takes place (reminders.ts), so every variant a family subscribes to fits. RFC 5545 puts every calendar property before the
// first component (strict parsers such as golang-ical reject anything else) and ends the file with CRLF;
// ical-generator does neither, so its output is put in that order here (propertiesFirst). A local time in the
// repeated hour when clocks go back names two instants; such events are written in UTC form.
import ical, { escape as escapeText, ICalEventStatus, ICalEventTransparency } from 'ical-generator';
import type { CalendarEvent } from '../calendar/types.ts';
import { runSteps, runStepsPaced } from '../util/event-loop.ts';
import { wallClock } from '../util/time-zone.ts';
import { cssColorName } from './css-colors.ts';
import { ALARM_BYTES } from './reminders.ts';
import { isUnambiguousLocal, vtimezone, zonedDate } from './timezone.ts';

export interface IcsCalendarInfo {
  /** X-WR-CALNAME / NAME. */
  name: string;
  /** X-WR-CALDESC; a note is appended when events had to be left out. */
  description?: string;
  timeZone: string;
  /** `#rrggbb`, written as X-APPLE-CALENDAR-COLOR and (the nearest CSS3 colour name) as RFC 7986 COLOR. */
  color?: string | null;
  /** The window the feed covers; VTIMEZONE spans its years. */
  window: { from: Date; to: Date };
  /** REFRESH-INTERVAL and X-PUBLISHED-TTL, seconds. Default one hour. */
  refreshSeconds?: number;
}

export interface RenderedIcs {
  body: string;
  bytes: number;
  /** Events written. */
  eventCount: number;
  /** Events left out to stay under maxBytes (the farthest future ones). */
  trimmed: number;
  /** When trimmed: the start of the first event left out. */
  completeUntil: string | null;
}

export const DEFAULT_MAX_BYTES = 1_000_000;

const STATUS: Record<CalendarEvent['status'], ICalEventStatus> = {
  confirmed: ICalEventStatus.CONFIRMED,
  tentative: ICalEventStatus.TENTATIVE,
  cancelled: ICalEventStatus.CANCELLED,
};

/** Control characters other than newline and tab are not allowed in iCalendar text. */
function clean(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  return value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
}

/** Calendar-level text is written raw by ical-generator: escape it as a TEXT value (RFC 5545 3.3.11). */
function text(value: string): string {
  return escapeText(clean(value), false);
}

/** Events added to the calendar between two pauses of a paced render (a few milliseconds of work). */
const EVENTS_PER_STEP = 200;

/** Builds the calendar text; yields (a pause point for renderIcsPaced) every EVENTS_PER_STEP events. */
function* build(
  info: IcsCalendarInfo,
  events: CalendarEvent[],
  note: string | null,
): Generator<void, string> {
  const fromYear = wallClock(info.window.from.getTime(), info.timeZone).year;
  const toYear = wallClock(info.window.to.getTime(), info.timeZone).year;
  const description = [info.description, note].filter(Boolean).join('\n\n');
  const cal = ical({
    prodId: { company: 'rostercal', product: 'rostercal', language: 'EN' },
    name: text(info.name),
    ...(description ? { description: text(description) } : {}),
    // name null: ical-generator would otherwise write DTSTAMP/LAST-MODIFIED as floating local times.
    timezone: { name: null, generator: (tz) => vtimezone(tz, fromYear, toYear) },
    ttl: info.refreshSeconds ?? 3600,
    ...(info.color ? { color: info.color } : {}),
  });
  cal.x('X-WR-TIMEZONE', info.timeZone);
  let added = 0;
  for (const e of events) {
    if (++added % EVENTS_PER_STEP === 0) yield;
    const lastModified = new Date(e.lastModified);
    const startMs = Date.parse(e.start);
    const endMs = Date.parse(e.end);
    const local = isUnambiguousLocal(startMs, e.timeZone) && isUnambiguousLocal(endMs, e.timeZone);
    const event = cal.createEvent({
      id: e.uid,
      sequence: e.sequence,
      ...(local
        ? { start: zonedDate(startMs, e.timeZone), end: zonedDate(endMs, e.timeZone), timezone: e.timeZone }
        : { start: new Date(startMs), end: new Date(endMs) }),
      // For a published feed DTSTAMP is when the information was last revised (RFC 5545 3.8.7.2); using
      // LAST-MODIFIED keeps a re-render of unchanged data byte-identical (same ETag).
      stamp: lastModified,
      lastModified,
      summary: clean(e.title),
      description: clean(e.description) || null,
      status: STATUS[e.status],
      // A bye is no game: free time, and no reminder (reminders.ts passes TRANSP:TRANSPARENT events over).
      ...(e.noGame ? { transparency: ICalEventTransparency.TRANSPARENT } : {}),
      categories: e.categories.map((name) => ({ name: clean(name) })),
    });
    if (e.location) {
      const title = clean([e.location.name, e.location.address].filter(Boolean).join(', '));
      const hasGeo = e.location.latitude !== null && e.location.longitude !== null;
      event.location(
        hasGeo
          ? { title, geo: { lat: e.location.latitude ?? 0, lon: e.location.longitude ?? 0 } }
          : { title },
      );
    }
  }
  yield;
  // RFC 7986's own COLOR beside Apple's (ical-generator writes only X- properties of the calendar itself).
  return propertiesFirst(cal.toString(), info.color ? [`COLOR:${cssColorName(info.color)}`] : []);
}

/**
 * The calendar's own properties (wherever ical-generator wrote them) before its first component, and a CRLF
 * after END:VCALENDAR. Lines are moved whole with their folded continuations; components are left as they are.
 */
export function propertiesFirst(text: string, extraProperties: readonly string[] = []): string {
  const lines = text.replace(/\r\n$/, '').split('\r\n');
  if (lines[0] !== 'BEGIN:VCALENDAR' || lines[lines.length - 1] !== 'END:VCALENDAR') {
    throw new Error('ical-generator output is not one VCALENDAR');
  }
  const props: string[] = [];
  const components: string[] = [];
  let depth = 0;
  for (const line of lines.slice(1, -1)) {
    if (depth === 0 && !line.startsWith('BEGIN:')) {
      props.push(line);
      continue;
    }
    components.push(line);
    if (line.startsWith('BEGIN:')) depth++;
    else if (line.startsWith('END:')) depth--;
  }
  return `${['BEGIN:VCALENDAR', ...props, ...extraProperties, ...components, 'END:VCALENDAR'].join('\r\n')}\r\n`;
}

function trimNote(firstLeftOut: CalendarEvent, timeZone: string): string {
  const w = wallClock(new Date(firstLeftOut.start).getTime(), timeZone);
  const day = `${w.year}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
  return `This calendar is complete until ${day}; later events are left out to keep it small enough for calendar apps.`;
}

/** Renders the events (in start order) and keeps the result under maxBytes by leaving out the last ones. */
export function renderIcs(
  info: IcsCalendarInfo,
  input: CalendarEvent[],
  opts: { maxBytes?: number } = {},
): RenderedIcs {
  return runSteps(renderSteps(info, input, opts));
}

/**
 * renderIcs that gives the event loop a turn between steps: a calendar of a thousand events (and the several
 * builds of one trimmed to maxBytes) takes tens to hundreds of milliseconds, which requests would otherwise wait.
 */
export async function renderIcsPaced(
  info: IcsCalendarInfo,
  input: CalendarEvent[],
  opts: { maxBytes?: number } = {},
): Promise<RenderedIcs> {
  return runStepsPaced(renderSteps(info, input, opts));
}

function* renderSteps(
  info: IcsCalendarInfo,
  input: CalendarEvent[],
  opts: { maxBytes?: number },
): Generator<void, RenderedIcs> {
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const events = [...input].sort((a, b) => a.start.localeCompare(b.start) || a.uid.localeCompare(b.uid));
  // alarms[n]: the bytes a reminder variant adds to the first n events.
  const alarms = [0];
  for (const e of events)
    alarms.push(alarms.at(-1)! + (e.status === 'cancelled' || e.noGame ? 0 : ALARM_BYTES));
  const fits = (bytes: number, n: number) => bytes + alarms[n]! <= maxBytes;
  const full = yield* build(info, events, null);
  const fullBytes = Buffer.byteLength(full);
  if (fits(fullBytes, events.length)) {
    return { body: full, bytes: fullBytes, eventCount: events.length, trimmed: 0, completeUntil: null };
  }
  // Largest prefix that fits: estimate from the average event size, then step to the exact boundary.
  function* render(n: number): Generator<void, { body: string; bytes: number }> {
    const left = events[n];
    const body = yield* build(info, events.slice(0, n), left ? trimNote(left, info.timeZone) : null);
    return { body, bytes: Buffer.byteLength(body) };
  }
  let lo = 0;
  let hi = events.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits((yield* render(mid)).bytes, mid)) lo = mid;
    else hi = mid - 1;
  }
  const kept = yield* render(lo);
  if (!fits(kept.bytes, lo)) throw new Error(`calendar header alone exceeds ${maxBytes} bytes`);
  return {
    body: kept.body,
    bytes: kept.bytes,
    eventCount: lo,
    trimmed: events.length - lo,
    completeUntil: events[lo]?.start ?? null,
  };
}
