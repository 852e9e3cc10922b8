// What a calendar page shows per session and child (families/absence-view.ts): the offer, naming the child's other
// sessions a report would cover; a report standing upstream (undoable only from the link that made it); one sent but
// not confirmed; one being undone; and a session covered by a report made for another at the same time.
import { describe, expect, it } from 'vitest';
import { familyReason } from '../../src/domain/family-absence.ts';
import type { PreExplainedAbsence } from '../../src/domain/types.ts';
import { absenceView, type ViewInput } from '../../src/families/absence-view.ts';
import type { AbsenceAct } from '../../src/store/types.ts';

const LINK = 'aaaaaaaaaaaa';
const OTHER_LINK = 'bbbbbbbbbbbb';
const child = { studentId: 7, label: 'Ana' };
// Sessions 1 and 2 overlap (the same afternoon); 3 is the next day.
const s1 = { id: 1, start: '2026-03-02T05:00:00.000Z', end: '2026-03-02T06:00:00.000Z' };
const s2 = { id: 2, start: '2026-03-02T05:30:00.000Z', end: '2026-03-02T06:30:00.000Z' };
const s3 = { id: 3, start: '2026-03-03T05:00:00.000Z', end: '2026-03-03T06:00:00.000Z' };

function input(over: Partial<ViewInput> = {}): ViewInput {
  return {
    link: { children: [child], linkId: LINK },
    sessionIds: [1, 2, 3],
    sessions: new Map([[7, new Map([s1, s2, s3].map((s) => [s.id, s]))]]),
    absences: [],
    acts: [],
    ...over,
  };
}

const act = (over: Partial<AbsenceAct>): AbsenceAct => ({
  schoolId: 'hill',
  studentId: 7,
  sessionId: 1,
  linkId: LINK,
  state: 'reported',
  absenceId: 90,
  start: s1.start,
  end: s1.end,
  reservedAt: s1.start,
  updatedAt: s1.start,
  ...over,
});

const upstream = (linkId: string): PreExplainedAbsence => ({
  id: 90,
  studentId: 7,
  start: s1.start,
  end: s1.end,
  explained: true,
  reason: familyReason(linkId, 'dentist'),
});

describe('absenceView', () => {
  it('offers every session with nothing reported, naming the overlapping ones a report covers', () => {
    const view = absenceView(input());
    expect(view.reported.size).toBe(0);
    expect(view.offers.get(1)).toEqual([{ ...child, alsoCovers: [2] }]);
    expect(view.offers.get(2)).toEqual([{ ...child, alsoCovers: [1] }]);
    expect(view.offers.get(3)).toEqual([{ ...child, alsoCovers: [] }]);
  });

  it('leaves out a child whose session cannot be reported (not in its list)', () => {
    const view = absenceView(input({ sessions: new Map([[7, new Map([[3, s3]])]]) }));
    expect([...view.offers.keys()]).toEqual([3]);
  });

  it('shows an absence upstream as reported, undoable only from the link that made it', () => {
    const mine = absenceView(input({ absences: [upstream(LINK)], acts: [act({})] }));
    expect(mine.reported.get(1)).toEqual([
      { ...child, absenceId: 90, undoable: true, state: 'reported', forSession: null },
    ]);
    // The same absence covers session 2: it says which session the report was for, and offers nothing there.
    expect(mine.reported.get(2)).toEqual([
      { ...child, absenceId: 90, undoable: true, state: 'reported', forSession: 1 },
    ]);
    expect(mine.offers.has(1)).toBe(false);
    expect(mine.offers.has(2)).toBe(false);
    expect(mine.offers.get(3)).toEqual([{ ...child, alsoCovers: [] }]);

    const theirs = absenceView(input({ absences: [upstream(OTHER_LINK)] }));
    expect(theirs.reported.get(1)?.[0]?.undoable).toBe(false);
  });

  it('says a report sent but not confirmed is on its way, and one being undone is being undone', () => {
    const sent = absenceView(input({ acts: [act({ state: 'pending', absenceId: null })] }));
    expect(sent.reported.get(1)).toEqual([
      { ...child, absenceId: null, undoable: false, state: 'unconfirmed', forSession: null },
    ]);
    const undoing = absenceView(input({ absences: [upstream(LINK)], acts: [act({ state: 'undoing' })] }));
    expect(undoing.reported.get(1)).toEqual([
      { ...child, absenceId: 90, undoable: false, state: 'undoing', forSession: null },
    ]);
    // An undo in progress covers no other session: session 2 is reported by the absence still upstream.
    expect(undoing.reported.get(2)?.[0]?.state).toBe('reported');
  });

  it('trusts the store’s recorded report before the pull brings its absence', () => {
    const view = absenceView(input({ acts: [act({ linkId: OTHER_LINK })] }));
    expect(view.reported.get(1)).toEqual([
      { ...child, absenceId: 90, undoable: false, state: 'reported', forSession: null },
    ]);
    expect(view.reported.get(2)?.[0]).toMatchObject({ state: 'reported', forSession: 1 });
  });
});
