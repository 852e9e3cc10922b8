// A session's times on the school's wall clock (calendar/times.ts), as every output prints them: the zone named
// where wall times alone would mislead, the later day named for a session that ends after midnight.
import { describe, expect, it } from 'vitest';
import {
  sessionDate,
  sessionDay,
  sessionTimeRange,
  sessionTimeRangeZoned,
} from '../../src/calendar/times.ts';

const SYD = 'Australia/Sydney';

describe('a session’s times', () => {
  it('prints the school’s wall clock, 24-hour', () => {
    // 04:30Z on 2 March is 15:30 AEDT (UTC+11).
    expect(sessionTimeRange('2026-03-02T04:30:00.000Z', '2026-03-02T05:30:00.000Z', SYD)).toBe('15:30–16:30');
    expect(sessionTimeRange('2026-03-02T04:30:00.000Z', '2026-03-02T05:30:00.000Z', 'UTC')).toBe(
      '04:30–05:30',
    );
  });

  it('names the day a session ends on when it ends on a later one', () => {
    expect(sessionTimeRange('2026-03-07T07:00:00.000Z', '2026-03-07T14:00:00.000Z', SYD)).toBe(
      '18:00–Sun 8 Mar 01:00',
    );
  });

  it('names the zones when the clocks go back during the session', () => {
    // Sydney's clocks go back at 03:00 AEDT on 5 April 2026 (16:00Z on the 4th): 02:30 happens twice.
    const range = sessionTimeRange('2026-04-04T15:00:00.000Z', '2026-04-04T16:30:00.000Z', SYD);
    expect(range).toContain('AEDT');
    expect(range).toContain('AEST');
  });

  it('always names the zone for a terminal, once', () => {
    expect(sessionTimeRangeZoned('2026-03-02T04:30:00.000Z', '2026-03-02T05:30:00.000Z', SYD)).toBe(
      '15:30–16:30 AEDT',
    );
    const across = sessionTimeRangeZoned('2026-04-04T15:00:00.000Z', '2026-04-04T16:30:00.000Z', SYD);
    expect(across.match(/AEDT/g)).toHaveLength(1);
  });
});

describe('a session’s day', () => {
  it('is the school’s calendar day, not UTC’s', () => {
    // 14:00Z on 2 March is 01:00 on 3 March in Sydney.
    expect(sessionDate('2026-03-02T14:00:00.000Z', SYD)).toBe('2026-03-03');
    expect(sessionDate('2026-03-02T14:00:00.000Z', 'UTC')).toBe('2026-03-02');
  });

  it('is named in the page’s locale, short or long', () => {
    expect(sessionDay('2026-03-02T23:00:00.000Z', SYD, 'en-GB', 'short')).toBe('Tue 3 Mar');
    expect(sessionDay('2026-03-02T23:00:00.000Z', SYD, 'en-GB', 'long')).toBe('Tuesday 3 March');
    expect(sessionDay('2026-03-02T23:00:00.000Z', SYD, 'fr-FR', 'long')).toBe('mardi 3 mars');
  });
});
