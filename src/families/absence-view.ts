// What a calendar page shows of families' reports, per session it lists and child: reported (with Undo where this
// link reported it), not confirmed yet, being undone, or the offer. One absence upstream is a time range: a
// child's other session inside it is covered too, so the page says which report covers it, and the offer names,
// before the family confirms, the other sessions its report will cover (their coaches see it as well).

import { overlaps } from '../calendar/absences.ts';
import { familyReportOf } from '../domain/family-absence.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { AbsenceAct } from '../store/types.ts';

export interface ReportedAbsence {
  absenceId: Id | null;
  studentId: Id;
  label: string;
  /** Reported through this very link: it may undo it (until the session starts). */
  undoable: boolean;
  /** reported: it stands upstream; unconfirmed: sent, not confirmed yet; undoing: its undo is not confirmed yet. */
  state: 'reported' | 'unconfirmed' | 'undoing';
  /** The session it was reported for, when another one at the same time (this one is covered by it). */
  forSession: Id | null;
}

export interface Offer {
  studentId: Id;
  label: string;
  /** The child's other sessions at the same time: a report of this one covers them too. */
  alsoCovers: Id[];
}

/** What a page shows per session it lists: who may still report, and what was reported. */
export interface AbsenceView {
  offers: Map<Id, Offer[]>;
  reported: Map<Id, ReportedAbsence[]>;
}

export interface ViewInput {
  link: { children: { studentId: Id; label: string }[]; linkId: string };
  sessionIds: readonly Id[];
  /** Per child, the sessions that can still be reported, by id. */
  sessions: Map<Id, Map<Id, { id: Id; start: string; end: string }>>;
  /** Absences calendar pages reported for the link's children (the store's copy). */
  absences: readonly PreExplainedAbsence[];
  /** The reports kept for the link's children (any link's). */
  acts: readonly AbsenceAct[];
}

export function absenceView(input: ViewInput): AbsenceView {
  const view: AbsenceView = { offers: new Map(), reported: new Map() };
  for (const id of input.sessionIds) {
    const offers: Offer[] = [];
    const done: ReportedAbsence[] = [];
    for (const child of input.link.children) {
      const mine = input.sessions.get(child.studentId);
      const s = mine?.get(id);
      if (!s) continue;
      const line = lineFor(input, child, s);
      if (line) done.push(line);
      else
        offers.push({
          ...child,
          alsoCovers: [...(mine?.values() ?? [])]
            .filter((o) => o.id !== id && overlaps(o, s))
            .map((o) => o.id),
        });
    }
    if (offers.length) view.offers.set(id, offers);
    if (done.length) view.reported.set(id, done);
  }
  return view;
}

/** The line of a child's session that is reported (or on its way), or null: it can be reported. */
function lineFor(
  input: ViewInput,
  child: { studentId: Id; label: string },
  s: { id: Id; start: string; end: string },
): ReportedAbsence | null {
  const acts = input.acts.filter((a) => a.studentId === child.studentId);
  const own = acts.find((a) => a.sessionId === s.id);
  const cover = own ?? acts.find((a) => a.state !== 'undoing' && overlaps(a, s));
  const hit = input.absences.find((a) => a.studentId === child.studentId && overlaps(a, s));
  const base = { studentId: child.studentId, label: child.label };
  const forSession = (act: AbsenceAct | undefined) => (act && act.sessionId !== s.id ? act.sessionId : null);
  if (own?.state === 'undoing')
    return { ...base, absenceId: own.absenceId, undoable: false, state: 'undoing', forSession: null };
  if (hit) {
    const madeBy = acts.find((a) => a.absenceId === hit.id) ?? cover;
    return {
      ...base,
      absenceId: hit.id,
      undoable: familyReportOf(hit)?.linkId === input.link.linkId,
      state: 'reported',
      forSession: forSession(madeBy),
    };
  }
  if (!cover) return null;
  if (cover.state === 'reported' && cover.absenceId !== null)
    return {
      ...base,
      absenceId: cover.absenceId,
      undoable: cover.linkId === input.link.linkId,
      state: 'reported',
      forSession: forSession(cover),
    };
  return { ...base, absenceId: null, undoable: false, state: 'unconfirmed', forSession: forSession(cover) };
}
