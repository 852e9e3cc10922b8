import { describe, expect, it } from 'vitest';
import {
  hourMinute,
  isKnownTimeZone,
  localClock,
  offsetMinutes,
  transitions,
  wallToUtc,
  zoneAbbreviation,
} from '../../src/util/time-zone.ts';

const SYDNEY = 'Australia/Sydney';

describe('time-zone arithmetic', () => {
  it('knows IANA zones the runtime knows and refuses made-up ones', () => {
    expect(isKnownTimeZone(SYDNEY)).toBe(true);
    expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
  });

  it('finds Sydney 2026 clock changes to the minute: back on 5 April at 03:00 AEDT, forward on 4 October at 02:00 AEST', () => {
    const changes = transitions(SYDNEY, Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1));
    expect(changes).toEqual([
      { atMs: Date.UTC(2026, 3, 4, 16, 0), fromMin: 660, toMin: 600 },
      { atMs: Date.UTC(2026, 9, 3, 16, 0), fromMin: 600, toMin: 660 },
    ]);
    expect(offsetMinutes(Date.UTC(2026, 3, 4, 15, 59), SYDNEY)).toBe(660);
    expect(offsetMinutes(Date.UTC(2026, 3, 4, 16, 0), SYDNEY)).toBe(600);
  });

  it('agrees with Intl on the local wall clock across a whole year, hour by hour', () => {
    const f = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'America/New_York',
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 3_600_000) {
      const w = localClock(t, 'America/New_York');
      const p = Object.fromEntries(f.formatToParts(t).map((x) => [x.type, x.value]));
      expect(`${w.year}-${w.month}-${w.day} ${w.hour}:${w.minute}`).toBe(
        `${Number(p.year)}-${Number(p.month)}-${Number(p.day)} ${Number(p.hour)}:${Number(p.minute)}`,
      );
    }
  });

  it('turns a school-local wall-clock time into its UTC instant, on either side of a change', () => {
    expect(wallToUtc(Date.UTC(2026, 2, 2), 15, 30, SYDNEY)).toBe(Date.UTC(2026, 2, 2, 4, 30));
    expect(wallToUtc(Date.UTC(2026, 6, 2), 15, 30, SYDNEY)).toBe(Date.UTC(2026, 6, 2, 5, 30));
    expect(hourMinute(Date.UTC(2026, 6, 2, 5, 30), SYDNEY)).toBe('15:30');
  });

  it("names the zone's abbreviation, or the numeric offset where it has none", () => {
    expect(zoneAbbreviation(Date.UTC(2026, 0, 15), SYDNEY)).toBe('AEDT');
    expect(zoneAbbreviation(Date.UTC(2026, 6, 15), SYDNEY)).toBe('AEST');
    expect(zoneAbbreviation(Date.UTC(2026, 6, 15), 'Asia/Bangkok')).toBe('+07');
    expect(zoneAbbreviation(Date.UTC(2026, 6, 15), 'Asia/Kolkata')).toMatch(/^(IST|\+0530)$/);
  });
});
