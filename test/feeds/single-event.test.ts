// One event of a rendered feed as a calendar of its own (feeds/single-event.ts): cut from the feed's bytes, with
// only what an import needs around it, the event found by its UID even when the line is folded.
import { describe, expect, it } from 'vitest';
import { singleEventIcs } from '../../src/feeds/single-event.ts';

const zone = [
  'BEGIN:VTIMEZONE',
  'TZID:Australia/Sydney',
  'BEGIN:STANDARD',
  'TZOFFSETTO:+1000',
  'END:STANDARD',
  'END:VTIMEZONE',
];
const event = (uid: string, extra: string[] = []) => [
  'BEGIN:VEVENT',
  uid,
  'SEQUENCE:2',
  'SUMMARY:Football',
  ...extra,
  'BEGIN:VALARM',
  'ACTION:DISPLAY',
  'END:VALARM',
  'END:VEVENT',
];
const feed = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//rostercal//EN',
  'CALSCALE:GREGORIAN',
  'X-WR-CALNAME:Firsts',
  'X-WR-TIMEZONE:Australia/Sydney',
  'REFRESH-INTERVAL;VALUE=DURATION:PT1H',
  'COLOR:navy',
  ...zone,
  ...event('UID:session-1@hill.rostercal'),
  // A UID folded across two lines, as a long one is.
  ...event('UID:session-2-team-3@hill.rost\r\n ercal', ['DESCRIPTION:Bring boots']),
  'END:VCALENDAR',
  '',
].join('\r\n');

describe('one event of a feed', () => {
  it('is the feed’s event to the byte, with the head an import needs and the zone', () => {
    expect(singleEventIcs(feed, 'session-2-team-3@hill.rostercal')).toBe(
      [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'PRODID:-//rostercal//EN',
        'CALSCALE:GREGORIAN',
        'X-WR-TIMEZONE:Australia/Sydney',
        ...zone,
        ...event('UID:session-2-team-3@hill.rost\r\n ercal', ['DESCRIPTION:Bring boots']),
        'END:VCALENDAR',
        '',
      ].join('\r\n'),
    );
    const first = singleEventIcs(feed, 'session-1@hill.rostercal')!;
    expect(first).toContain('UID:session-1@hill.rostercal\r\n');
    expect(first).not.toContain('session-2');
    expect(first).not.toContain('X-WR-CALNAME');
    expect(first).not.toContain('REFRESH-INTERVAL');
    expect(first).not.toContain('COLOR');
  });

  it('is none for a UID the feed does not hold, a prefix of one, or bytes that are no calendar', () => {
    expect(singleEventIcs(feed, 'session-3@hill.rostercal')).toBeNull();
    expect(singleEventIcs(feed, 'session-1@hill')).toBeNull();
    expect(singleEventIcs(feed.replace('END:VCALENDAR', 'END:VCAL'), 'session-1@hill.rostercal')).toBeNull();
    expect(singleEventIcs('', 'session-1@hill.rostercal')).toBeNull();
  });
});
