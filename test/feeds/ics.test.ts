import { describe, expect, it } from 'vitest';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import { renderIcs } from '../../src/feeds/ics.ts';
import { offsetMinutes, transitions, vtimezone, wallClock } from '../../src/feeds/timezone.ts';
import { parseBoth, parseWithNodeIcal } from './parse.ts';

function event(over: Partial<CalendarEvent> & { start: string; end: string }): CalendarEvent {
  return {
    sessionId: 1,
    uid: `session-${over.start}@t.rostercal`,
    sequence: 0,
    lastModified: '2026-01-10T08:00:00.000Z',
    timeZone: 'Australia/Sydney',
    title: 'U15 Football',
    description: '',
    status: 'confirmed',
    location: null,
    color: null,
    categories: ['Football'],
    ...over,
  };
}

const window = { from: new Date('2026-09-01T00:00:00Z'), to: new Date('2027-09-01T00:00:00Z') };

describe('renderIcs', () => {
  it('writes valid calendar structure: no METHOD, refresh hints, VTIMEZONE, TZID times, UIDs, SEQUENCE, STATUS', () => {
    const ics = renderIcs({ name: 'Team', timeZone: 'Australia/Sydney', window }, [
      event({ uid: 'a@x', sequence: 3, start: '2026-10-10T23:00:00.000Z', end: '2026-10-11T00:30:00.000Z' }),
      event({
        uid: 'b@x',
        status: 'cancelled',
        start: '2026-10-12T23:00:00.000Z',
        end: '2026-10-13T00:30:00.000Z',
      }),
      event({
        uid: 'c@x',
        status: 'tentative',
        start: '2026-10-14T23:00:00.000Z',
        end: '2026-10-15T00:30:00.000Z',
      }),
    ]).body;
    expect(ics).not.toMatch(/^METHOD/m);
    expect(ics).toContain('REFRESH-INTERVAL;VALUE=DURATION:PT1H\r\n');
    expect(ics).toContain('X-PUBLISHED-TTL:PT1H\r\n');
    expect(ics).toContain('X-WR-CALNAME:Team\r\n');
    expect(ics).toContain('X-WR-TIMEZONE:Australia/Sydney\r\n');
    expect(ics.match(/BEGIN:VTIMEZONE\r\nTZID:Australia\/Sydney/g)).toHaveLength(1);
    expect(ics).toContain('DTSTART;TZID=Australia/Sydney:20261011T100000\r\n');
    expect(ics).toMatch(/DTSTAMP:\d{8}T\d{6}Z\r\n/);
    expect(ics).toMatch(/LAST-MODIFIED:20260110T080000Z\r\n/);
    const parsed = parseBoth(ics);
    expect(parsed.events.map((e) => [e.uid, e.sequence, e.status])).toEqual([
      ['a@x', 3, 'CONFIRMED'],
      ['b@x', 0, 'CANCELLED'],
      ['c@x', 0, 'TENTATIVE'],
    ]);
  });

  it('keeps instants exact across both daylight-saving changes of the school zone (both parsers)', () => {
    // Sydney: DST starts Sun 2026-10-04 02:00 (+10 → +11), ends Sun 2027-04-04 03:00 (+11 → +10).
    // Each event is at 09:00 school time, the day before and the day after each change.
    const local9 = [
      ['2026-10-02T23:00:00.000Z', 600],
      ['2026-10-04T22:00:00.000Z', 660],
      ['2027-04-02T22:00:00.000Z', 660],
      ['2027-04-04T23:00:00.000Z', 600],
    ] as const;
    const events = local9.map(([start]) =>
      event({ uid: start, start, end: new Date(Date.parse(start) + 3_600_000).toISOString() }),
    );
    const ics = renderIcs({ name: 'DST', timeZone: 'Australia/Sydney', window }, events).body;
    const parsed = parseBoth(ics);
    for (const [start] of local9) {
      const e = parsed.events.find((x) => x.uid === start)!;
      expect(new Date(e.start).toISOString()).toBe(start);
      expect(e.end - e.start).toBe(3_600_000);
    }
    // Written as 09:00 school time on each day, and the offsets are the zone's.
    for (const [start, offset] of local9) {
      const w = wallClock(Date.parse(start), 'Australia/Sydney');
      expect(w.hour).toBe(9);
      const day = `${w.year}${String(w.month).padStart(2, '0')}${String(w.day).padStart(2, '0')}`;
      expect(ics).toContain(`DTSTART;TZID=Australia/Sydney:${day}T090000\r\n`);
      expect(offsetMinutes(Date.parse(start), 'Australia/Sydney')).toBe(offset);
    }
  });

  it('VTIMEZONE lists the real transitions with the old offset in DTSTART', () => {
    const t = transitions('Europe/London', Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1));
    expect(t.map((x) => [new Date(x.atMs).toISOString(), x.fromMin, x.toMin])).toEqual([
      ['2026-03-29T01:00:00.000Z', 0, 60],
      ['2026-10-25T01:00:00.000Z', 60, 0],
    ]);
    const v = vtimezone('Europe/London', 2026, 2026);
    expect(v).toContain(
      'BEGIN:DAYLIGHT\r\nDTSTART:20260329T010000\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0100',
    );
    expect(v).toContain(
      'BEGIN:STANDARD\r\nDTSTART:20261025T020000\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0000',
    );
    // A zone without DST gets one observance.
    const hcm = vtimezone('Asia/Ho_Chi_Minh', 2026, 2027);
    expect(hcm.match(/BEGIN:STANDARD/g)).toHaveLength(1);
    expect(hcm).toContain('TZOFFSETTO:+0700');
    expect(hcm).not.toContain('DAYLIGHT');
  });

  it('escapes and folds any text: commas, semicolons, backslashes, newlines, emoji, Vietnamese, Arabic', () => {
    const nasty = [
      'Kick-off 9:30; bring boots, shin pads & water\\bottle',
      'Line two\nLine three\r\nLine four',
      'Emoji ⚽🏉🎉👩🏽‍🏫 and a flag 🇻🇳',
      'Nguyễn Thị Ánh Tuyết sẽ dẫn đội bóng đá nữ U15 tới sân vận động Quận Bình Thạnh, nhớ mang giày và nước uống đầy đủ.',
      'سيقام التدريب في الملعب الرئيسي؛ يرجى إحضار الزي الرياضي، والماء، والحذاء المناسب، والوصول قبل الموعد بعشر دقائق.',
      `Control\u0007chars\u0000 go`,
    ].join('\n');
    const title = 'Cancelled: U15 Football vs "St. Mary\'s", Ōtaki; 🏆';
    const name = 'U15, Football; Nguyễn\\Team\nSecond line';
    const ics = renderIcs({ name, description: 'Desc; with, specials', timeZone: 'Europe/London', window }, [
      event({
        timeZone: 'Europe/London',
        title,
        description: nasty,
        start: '2026-11-01T10:00:00.000Z',
        end: '2026-11-01T11:00:00.000Z',
        location: {
          name: 'Sân vận động, Quận 1',
          address: '12 Lê Lợi; HCMC',
          latitude: 10.77,
          longitude: 106.7,
        },
      }),
    ]).body;
    for (const line of ics.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    expect(ics.replace(/\r\n/g, '')).not.toMatch(/\n|\r/);
    const parsed = parseBoth(ics);
    const e = parsed.events[0]!;
    const expected = nasty.replace(/\r\n/g, '\n').replaceAll('\u0000', '').replaceAll('\u0007', '');
    expect(e.summary).toBe(title);
    expect(e.description).toBe(expected);
    expect(e.location).toBe('Sân vận động, Quận 1, 12 Lê Lợi; HCMC');
    expect(e.geo).toEqual({ lat: 10.77, lon: 106.7 });
    expect(parsed.name).toBe(name);
    expect(parsed.description).toBe('Desc; with, specials');
    expect(parseWithNodeIcal(ics).name).toBe(name);
  });

  it('stays under the size limit by leaving out the farthest future events, and says so', () => {
    const events = Array.from({ length: 400 }, (_, i) => {
      const start = new Date(Date.UTC(2026, 9, 1) + i * 86_400_000).toISOString();
      return event({
        uid: `e${i}@x`,
        start,
        end: new Date(Date.parse(start) + 3_600_000).toISOString(),
        description: 'x'.repeat(400),
      });
    });
    const shuffled = [...events].reverse();
    const r = renderIcs({ name: 'Big', timeZone: 'Europe/London', window }, shuffled, { maxBytes: 100_000 });
    expect(r.bytes).toBeLessThanOrEqual(100_000);
    expect(r.bytes).toBe(Buffer.byteLength(r.body));
    expect(r.trimmed).toBeGreaterThan(0);
    expect(r.eventCount + r.trimmed).toBe(400);
    const parsed = parseBoth(r.body);
    expect(parsed.events).toHaveLength(r.eventCount);
    // The kept ones are the earliest.
    expect(parsed.events.map((e) => e.uid)).toEqual(events.slice(0, r.eventCount).map((e) => e.uid));
    expect(parsed.description).toMatch(/complete until \d{4}-\d{2}-\d{2}; later events are left out/);
    const untrimmed = renderIcs({ name: 'Big', timeZone: 'Europe/London', window }, events);
    expect(untrimmed.trimmed).toBe(0);
    expect(untrimmed.body).not.toContain('X-WR-CALDESC');
  });
});
