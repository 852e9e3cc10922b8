import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import type { CalendarEvent } from '../../src/calendar/types.ts';
import { renderIcs } from '../../src/feeds/ics-writer.ts';
import { REMINDER_KEYS, withReminder } from '../../src/feeds/reminders.ts';
import { isUnambiguousLocal, vtimezone } from '../../src/feeds/timezone.ts';
import { localClock, offsetMinutes, transitions, wallClock } from '../../src/util/time-zone.ts';
import { parseAll, parseWithNodeIcal } from './parse.ts';
import { parseStrict, strictZoneOffset } from './strict.ts';

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
    const parsed = parseAll(ics);
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
    const parsed = parseAll(ics);
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
      'BEGIN:DAYLIGHT\r\nDTSTART:20250330T010000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0100',
    );
    expect(v).toContain(
      'BEGIN:STANDARD\r\nDTSTART:20251026T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0000',
    );
    // Where the rules changed within the span (Mexico City dropped daylight saving in October 2022), one dated
    // observance per change, DTSTART in the old offset.
    const mx = vtimezone('America/Mexico_City', 2022, 2023);
    expect(mx).toContain(
      'BEGIN:STANDARD\r\nDTSTART:20221030T020000\r\nTZOFFSETFROM:-0500\r\nTZOFFSETTO:-0600',
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
    const parsed = parseAll(ics);
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
    const parsed = parseAll(r.body);
    expect(parsed.events).toHaveLength(r.eventCount);
    // The kept ones are the earliest.
    expect(parsed.events.map((e) => e.uid)).toEqual(events.slice(0, r.eventCount).map((e) => e.uid));
    expect(parsed.description).toMatch(/complete until \d{4}-\d{2}-\d{2}; later events are left out/);
    const untrimmed = renderIcs({ name: 'Big', timeZone: 'Europe/London', window }, events);
    expect(untrimmed.trimmed).toBe(0);
    expect(untrimmed.body).not.toContain('X-WR-CALDESC');
  });

  it('keeps every reminder variant under the same limit, trimmed with the same note (issue 42)', () => {
    // Alarms are added to the rendered bytes (reminders.ts): the trim must leave room for them, or a feed just
    // under the limit is well over it with reminders (999,993 bytes became 1,152,873).
    const events = Array.from({ length: 1_200 }, (_, i) => {
      const start = new Date(Date.UTC(2026, 9, 1) + i * 3_600_000).toISOString();
      return event({
        uid: `e${i}@x`,
        start,
        end: new Date(Date.parse(start) + 1_800_000).toISOString(),
        description: 'x'.repeat(40),
        status: i % 10 === 0 ? 'cancelled' : 'confirmed',
      });
    });
    const r = renderIcs({ name: 'Big', timeZone: 'Europe/London', window }, events, { maxBytes: 200_000 });
    expect(r.trimmed).toBeGreaterThan(0);
    const note = parseAll(r.body).description;
    expect(note).toMatch(/complete until \d{4}-\d{2}-\d{2}; later events are left out/);
    const sizes: Record<string, number> = {};
    for (const key of REMINDER_KEYS) {
      const variant = withReminder(r.body, key);
      sizes[key] = Buffer.byteLength(variant);
      expect(parseAll(variant).description).toBe(note);
    }
    expect(Math.max(...Object.values(sizes)), JSON.stringify(sizes)).toBeLessThanOrEqual(200_000);
    // A calendar that fits with its alarms is not trimmed at all.
    const small = renderIcs({ name: 'Big', timeZone: 'Europe/London', window }, events.slice(0, 100), {
      maxBytes: 200_000,
    });
    expect(small.trimmed).toBe(0);
  });
});

describe('RFC 5545 structure (what strict parsers demand)', () => {
  const one = (tz = 'Australia/Sydney') =>
    renderIcs({ name: 'Team', description: 'About', timeZone: tz, color: '#ff8800', window }, [
      event({ timeZone: tz, start: '2026-10-10T23:00:00.000Z', end: '2026-10-11T00:30:00.000Z' }),
    ]).body;

  it('writes every calendar property before the first component', () => {
    const ics = one();
    const lines = ics.split('\r\n');
    const firstComponent = lines.findIndex((l, i) => i > 0 && l.startsWith('BEGIN:'));
    for (const p of [
      'VERSION:',
      'PRODID:',
      'X-WR-CALNAME:',
      'X-WR-CALDESC:',
      'REFRESH-INTERVAL;',
      'X-PUBLISHED-TTL:',
      'X-APPLE-CALENDAR-COLOR:',
      'COLOR:',
      'X-WR-TIMEZONE:',
    ]) {
      const at = lines.findIndex((l) => l.startsWith(p));
      expect(at, p).toBeGreaterThan(0);
      expect(at, `${p} before BEGIN:${lines[firstComponent]}`).toBeLessThan(firstComponent);
    }
    expect(parseStrict(ics).calendarProps).toEqual(
      expect.arrayContaining(['X-WR-TIMEZONE', 'REFRESH-INTERVAL', 'X-PUBLISHED-TTL']),
    );
  });

  it('gives the colour as RFC 7986 COLOR (a CSS3 colour name) beside X-APPLE-CALENDAR-COLOR (issue 26)', () => {
    const lines = one().split('\r\n');
    expect(lines).toContain('X-APPLE-CALENDAR-COLOR:#FF8800');
    expect(lines).toContain('COLOR:darkorange');
    const plain = renderIcs({ name: 'Team', timeZone: 'UTC', color: null, window }, [
      event({ timeZone: 'UTC', start: '2026-10-10T23:00:00.000Z', end: '2026-10-11T00:30:00.000Z' }),
    ]).body;
    expect(plain).not.toMatch(/^COLOR:/m);
  });

  it('ends with CRLF after END:VCALENDAR', () => {
    expect(one().endsWith('END:VCALENDAR\r\n')).toBe(true);
  });

  it('the strict reader rejects what golang-ical rejects (so the checks above cannot pass vacuously)', () => {
    const good = one();
    expect(() => parseStrict(good)).not.toThrow();
    const late = good
      .replace('X-WR-TIMEZONE:Australia/Sydney\r\n', '')
      .replace('END:VCALENDAR\r\n', 'X-WR-TIMEZONE:Australia/Sydney\r\nEND:VCALENDAR\r\n');
    expect(() => parseStrict(late)).toThrow(/X-WR-TIMEZONE of VCALENDAR after its sub-component/);
    expect(() => parseStrict(good.slice(0, -2))).toThrow(/does not end with CRLF/);
    const ambiguous = good.replace(
      /DTSTART;TZID=Australia\/Sydney:\d{8}T\d{6}/,
      'DTSTART;TZID=Australia/Sydney:20270404T023000',
    );
    expect(() => parseStrict(ambiguous)).toThrow(/ambiguous in Australia\/Sydney/);
  });
});

// The repeated hour at the end of daylight saving, in four zones: two instants an hour apart share a local
// time. Each pair starts 60 minutes apart and lasts 75 minutes.
const OVERLAPS = [
  // Sydney: 2027-04-04 03:00 AEDT → 02:00 AEST (the sessions 106411 and 106412).
  {
    tz: 'Australia/Sydney',
    a: '2027-04-03T15:30:00.000Z',
    b: '2027-04-03T16:30:00.000Z',
    local: '20270404T023000',
  },
  // London: 2026-10-25 02:00 BST → 01:00 GMT.
  {
    tz: 'Europe/London',
    a: '2026-10-25T00:30:00.000Z',
    b: '2026-10-25T01:30:00.000Z',
    local: '20261025T013000',
  },
  // New York: 2026-11-01 02:00 EDT → 01:00 EST.
  {
    tz: 'America/New_York',
    a: '2026-11-01T05:30:00.000Z',
    b: '2026-11-01T06:30:00.000Z',
    local: '20261101T013000',
  },
  // Lord Howe: 2027-04-04 02:00 LHDT (+11) → 01:30 LHST (+10:30), a half-hour overlap.
  {
    tz: 'Australia/Lord_Howe',
    a: '2027-04-03T14:40:00.000Z',
    b: '2027-04-03T15:10:00.000Z',
    local: '20270404T014000',
  },
] as const;

describe('times in the repeated hour at the end of daylight saving', () => {
  for (const o of OVERLAPS) {
    it(`${o.tz}: written in UTC form, read back exactly by all three parsers`, () => {
      expect(localClock(Date.parse(o.a), o.tz)).toEqual(localClock(Date.parse(o.b), o.tz));
      const later = (iso: string, min: number) => new Date(Date.parse(iso) + min * 60_000).toISOString();
      const events = [o.a, o.b].map((start) =>
        event({ uid: `${start}@x`, timeZone: o.tz, start, end: later(start, 75) }),
      );
      // One that is plainly outside the overlap keeps its local time with TZID.
      const plain = later(o.a, -3 * 60 * 24);
      events.push(event({ uid: 'plain@x', timeZone: o.tz, start: plain, end: later(plain, 75) }));
      const ics = renderIcs({ name: 'DST', timeZone: o.tz, window }, events).body;
      expect(ics).not.toContain(`:${o.local}\r\n`);
      const utc = (iso: string) => iso.replace(/[-:]/g, '').replace(/\.\d{3}/, '');
      expect(ics).toContain(`DTSTART:${utc(o.a)}\r\n`);
      expect(ics).toContain(`DTSTART:${utc(o.b)}\r\n`);
      expect(ics).toMatch(new RegExp(`DTSTART;TZID=${o.tz}:\\d{8}T\\d{6}\\r\\n`));
      const parsed = parseAll(ics);
      for (const start of [o.a, o.b, plain]) {
        const e = parsed.events.find((x) => x.start === Date.parse(start));
        expect(e, `${o.tz} ${start}`).toBeDefined();
        expect(e!.end - e!.start).toBe(75 * 60_000);
      }
    });
  }
});

// Every zone any test uses, plus zones whose rules are irregular (Casablanca moves its clocks around Ramadan)
// or changed (Mexico City dropped daylight saving in 2022).
const ZONES = [
  'Australia/Sydney',
  'Europe/London',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Ho_Chi_Minh',
  'Europe/Berlin',
  'Etc/UTC',
  'Pacific/Auckland',
  'Asia/Kolkata',
  'America/Mexico_City',
  'Africa/Casablanca',
];

/**
 * The offset (minutes) ical.js's own expansion of the VTIMEZONE (RRULEs included) gives to the instant's local
 * time. Asked by local time: ical.js's UTC→zone conversion is off by an hour right after a change.
 */
function icalJsOffset(vtz: string, tz: string): (ms: number) => number {
  const comp = new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\n${vtz}\r\nEND:VCALENDAR\r\n`));
  const zone = new ICAL.Timezone(comp.getFirstSubcomponent('vtimezone')!);
  return (ms) => {
    const w = localClock(ms, tz);
    const t = new ICAL.Time({ ...w, isDate: false }, zone);
    return Math.round(zone.utcOffset(t) / 60);
  };
}

describe('VTIMEZONE', () => {
  it('uses yearly RRULE observances where the zone changes the same way every year', () => {
    for (const tz of ['Australia/Sydney', 'Europe/London', 'America/New_York', 'Australia/Lord_Howe']) {
      const v = vtimezone(tz, 2026, 2027);
      expect(v.match(/BEGIN:DAYLIGHT/g), tz).toHaveLength(1);
      expect(v.match(/BEGIN:STANDARD/g), tz).toHaveLength(1);
      expect(v.match(/RRULE:FREQ=YEARLY;BYMONTH=\d+;BYDAY=-?\dSU/g), tz).toHaveLength(2);
    }
    expect(vtimezone('Europe/London', 2026, 2027)).toContain(
      'BEGIN:DAYLIGHT\r\nDTSTART:20250330T010000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nTZOFFSETFROM:+0000\r\nTZOFFSETTO:+0100\r\nTZNAME:BST',
    );
    expect(vtimezone('America/New_York', 2026, 2027)).toContain('RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU');
    expect(vtimezone('Australia/Sydney', 2026, 2027)).toContain('RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=1SU');
    // Irregular or changed rules keep exact dated observances.
    expect(vtimezone('Africa/Casablanca', 2026, 2027)).not.toContain('RRULE');
    expect(vtimezone('America/Mexico_City', 2022, 2023)).not.toContain('RRULE');
  });

  it('agrees with the zone data (Intl) at every half hour around each change and daily across the span, for every zone in the tests', () => {
    for (const tz of ZONES) {
      for (const [from, to] of [
        [2026, 2027],
        [2022, 2023],
      ] as const) {
        const v = vtimezone(tz, from, to);
        const start = Date.UTC(from, 0, 1);
        const end = Date.UTC(to + 1, 0, 1);
        const instants: number[] = [];
        // Daily, at an hour that walks round the clock.
        for (let t = start; t < end; t += 25 * 3_600_000) instants.push(t);
        for (const c of transitions(tz, start, end)) {
          for (let d = -3; d <= 3; d++) instants.push(c.atMs + d * 30 * 60_000, c.atMs - 1000);
        }
        const strict = strictZoneOffset(v);
        const icalJs = icalJsOffset(v, tz);
        for (const t of instants) {
          const at = `${tz} ${new Date(t).toISOString()}`;
          expect(strict(t), at).toBe(offsetMinutes(t, tz));
          // A local time in the repeated hour is ambiguous (feeds never write those: see above).
          if (isUnambiguousLocal(t, tz)) expect(icalJs(t), at).toBe(offsetMinutes(t, tz));
        }
      }
    }
  });

  it('names observances with the zone abbreviations (AEST, BST, EDT, LHDT), or the numeric offset where a zone has none', () => {
    const names = (tz: string) =>
      [...vtimezone(tz, 2026, 2027).matchAll(/TZNAME:(.*)\r\n/g)].map((m) => m[1]).sort();
    expect(names('Australia/Sydney')).toEqual(['AEDT', 'AEST']);
    expect(names('Europe/London')).toEqual(['BST', 'GMT']);
    expect(names('America/New_York')).toEqual(['EDT', 'EST']);
    expect(names('Australia/Lord_Howe')).toEqual(['LHDT', 'LHST']);
    expect(names('Europe/Berlin')).toEqual(['CEST', 'CET']);
    expect(names('Asia/Ho_Chi_Minh')).toEqual(['+07']);
    expect(names('Asia/Kolkata')).toEqual(['IST']);
    for (const tz of ZONES) expect(vtimezone(tz, 2026, 2027), tz).not.toMatch(/TZNAME:GMT[+-]/);
  });
});
