// Who is out of a session and why (calendar/absences.ts): only absences that share an instant with the session
// count, deleted ones never; the words every staff output prints, a family's report named as such.
import { describe, expect, it } from 'vitest';
import { absencesOverlapping, absenceWords, overlaps, whyOut } from '../../src/calendar/absences.ts';
import { familyReason } from '../../src/domain/family-absence.ts';
import type { PreExplainedAbsence } from '../../src/domain/types.ts';

const session = { start: '2026-03-02T05:00:00.000Z', end: '2026-03-02T06:00:00.000Z' };
const time = (iso: string) => iso.slice(11, 16);
const absence = (
  id: number,
  studentId: number,
  start: string,
  end: string,
  reason = 'Dentist',
  explained = true,
) => ({ id, studentId, start, end, reason, explained }) as PreExplainedAbsence;

describe('which absences mark a child out', () => {
  it('counts spans that share an instant, not ones that only touch', () => {
    expect(overlaps({ start: '2026-03-02T04:00:00Z', end: '2026-03-02T05:00:00Z' }, session)).toBe(false);
    expect(overlaps({ start: '2026-03-02T06:00:00Z', end: '2026-03-02T07:00:00Z' }, session)).toBe(false);
    expect(overlaps({ start: '2026-03-02T04:00:00Z', end: '2026-03-02T05:00:01Z' }, session)).toBe(true);
    expect(overlaps({ start: '2026-03-02T05:59:59Z', end: '2026-03-02T09:00:00Z' }, session)).toBe(true);
    expect(overlaps({ start: '2026-03-02T00:00:00Z', end: '2026-03-03T00:00:00Z' }, session)).toBe(true);
  });

  it('groups the overlapping ones per child, leaving out the deleted and the ones at other times', () => {
    const list = [
      absence(1, 10, '2026-03-02T04:00:00.000Z', '2026-03-02T07:00:00.000Z'),
      absence(2, 10, '2026-03-02T05:30:00.000Z', '2026-03-02T05:45:00.000Z'),
      absence(3, 11, '2026-03-02T06:00:00.000Z', '2026-03-02T07:00:00.000Z'),
      { ...absence(4, 12, session.start, session.end), meta: { deletedAt: '2026-03-01T00:00:00.000Z' } },
      { ...absence(5, 13, session.start, session.end), meta: { deletedAt: null } },
    ];
    const out = absencesOverlapping(session, list);
    expect([...out.keys()].sort()).toEqual([10, 13]);
    expect(out.get(10)!.map((a) => a.id)).toEqual([1, 2]);
  });
});

describe('the words of an absence', () => {
  it('says the school’s reason, whether it was pre-explained, and the part of the session it covers', () => {
    expect(absenceWords([absence(1, 10, session.start, session.end)], session, time)).toBe(
      'Pre-explained: Dentist',
    );
    const part = absence(2, 10, '2026-03-02T05:30:00.000Z', '2026-03-02T05:45:00.000Z', '  ', false);
    expect(absenceWords([part], session, time)).toBe('Reported: no reason given (from 05:30, until 05:45)');
    const two = [absence(1, 10, '2026-03-02T04:00:00.000Z', '2026-03-02T05:20:00.000Z'), part];
    expect(absenceWords(two, session, time)).toBe(
      'Pre-explained: Dentist (until 05:20)\nReported: no reason given (from 05:30, until 05:45)',
    );
  });

  it('names a family’s report with its words, never the mark rostercal keeps in the reason', () => {
    const said = absence(1, 10, session.start, session.end, familyReason('abcdef012345', 'sore knee'));
    expect(absenceWords([said], session, time)).toBe('Family reported: sore knee');
    const silent = absence(2, 10, session.start, session.end, familyReason('abcdef012345', ''));
    expect(absenceWords([silent], session, time)).toBe('Family reported');
  });
});

describe('why a child is out', () => {
  const opts = (sessionIsToday: boolean) => ({ sessionIsToday, time });
  it('takes the absences first, and the service’s mark only for a session today', () => {
    const member = { absentToday: true, absentReason: ' Sick ' };
    expect(whyOut(member, [], session, opts(true))).toBe('Absent today: Sick');
    expect(whyOut({ absentToday: true, absentReason: '' }, [], session, opts(true))).toBe('Absent today');
    expect(whyOut(member, [], session, opts(false))).toBe('');
    expect(whyOut({ absentToday: false }, [], session, opts(true))).toBe('');
    const list = [absence(1, 10, session.start, session.end)];
    expect(whyOut(member, list, session, opts(true))).toBe('Pre-explained: Dentist');
  });
});
