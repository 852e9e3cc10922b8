// Reminder variants of a feed: the same calendar with a VALARM in every event that still takes place, chosen
// by the parent when subscribing (`/feeds/<token>.ics?reminder=1h`). Made from the rendered bytes, so a variant
// always says exactly what the plain feed says, and the render leaves room for the alarms under the size cap
// (ALARM_BYTES, ics-writer.ts), so every variant stays under it with the same trim note. Of the calendar apps,
// only some honour a subscribed calendar's VALARM: see the page's words (landing.ts) and the README.
export const REMINDERS = {
  none: { minutes: 0, label: 'No reminder', trigger: '' },
  '30m': { minutes: 30, label: '30 minutes before', trigger: '-PT30M' },
  '1h': { minutes: 60, label: '1 hour before', trigger: '-PT1H' },
  '2h': { minutes: 120, label: '2 hours before', trigger: '-PT2H' },
  '1d': { minutes: 1440, label: '1 day before', trigger: '-P1D' },
} as const;

export type ReminderKey = keyof typeof REMINDERS;
export const REMINDER_KEYS = Object.keys(REMINDERS) as ReminderKey[];

export function isReminderKey(v: unknown): v is ReminderKey {
  return typeof v === 'string' && Object.hasOwn(REMINDERS, v);
}

import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);

const END_EVENT = '\r\nEND:VEVENT\r\n';

const alarmFor = (trigger: string) =>
  `\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Reminder\r\nTRIGGER:${trigger}\r\nEND:VALARM`;

/** The most bytes a reminder variant adds to one event that still takes place (its longest alarm). */
export const ALARM_BYTES = Math.max(
  ...Object.values(REMINDERS).map((r) => (r.trigger ? alarmFor(r.trigger).length : 0)),
);

/**
 * The calendar with a display alarm before every event that takes place: not cancelled, not a bye (free time). Content lines never start with
 * `END:VEVENT` except the component's own end (text values escape line breaks; folded lines start with a
 * space), so the events can be found in the bytes without parsing them.
 */
export function withReminder(ics: string, key: ReminderKey): string {
  const r = REMINDERS[key];
  if (!r.trigger) return ics;
  const alarm = alarmFor(r.trigger);
  let out = '';
  let at = 0;
  for (let end = ics.indexOf(END_EVENT, at); end >= 0; end = ics.indexOf(END_EVENT, at)) {
    const begin = ics.lastIndexOf('\r\nBEGIN:VEVENT\r\n', end);
    const event = ics.slice(begin, end);
    out += ics.slice(at, end);
    if (!/\r\n(?:STATUS:CANCELLED|TRANSP:TRANSPARENT)\r\n/.test(`${event}\r\n`)) out += alarm;
    out += END_EVENT;
    at = end + END_EVENT.length;
  }
  return out + ics.slice(at);
}

/** The variant's strong validator, from the plain feed's ETag (the variant is a function of those bytes). */
export function reminderEtag(etag: string, key: ReminderKey): string {
  return key === 'none' ? etag : `${etag}.${key}`;
}

/** A reminder variant: its bytes, and their gzip made on first ask. */
export interface ReminderVariant {
  body: Buffer;
  gzip(): Promise<Buffer>;
}

/** Reminder variants of a rendered calendar, made on first request and dropped with it. */
const variants = new WeakMap<{ body: Buffer }, Map<ReminderKey, ReminderVariant>>();

export function reminderVariant(feed: { body: Buffer }, key: ReminderKey): ReminderVariant {
  let byKey = variants.get(feed);
  if (!byKey) {
    byKey = new Map();
    variants.set(feed, byKey);
  }
  let v = byKey.get(key);
  if (!v) {
    const body = Buffer.from(withReminder(feed.body.toString('utf8'), key), 'utf8');
    // Compressed on zlib's thread pool, not the event loop: a large feed's gzip held the loop for tens of
    // milliseconds, on every variant's first request (issue 28, "never a stall"). Asked once, shared by all.
    let gzipped: Promise<Buffer> | undefined;
    v = { body, gzip: () => (gzipped ??= gzipAsync(body, { level: 6 })) };
    byKey.set(key, v);
  }
  return v;
}
