// Who is out of a session, and why, decided once for every staff output: the attendance and match-day sheets, /staff
// and the session page all say it in these words (a family's report with its words, the school's pre-explained
// reason, the service's "absent today"), none deriving its own.
import { familyReportOf } from '../domain/family-absence.ts';
import type { Id, PreExplainedAbsence, TeamMember } from '../domain/types.ts';

type Span = { start: string; end: string };

/** Whether two spans of time share an instant (an absence and a session: exactly these mark a child out). */
export function overlaps(a: Span, b: Span): boolean {
  return Date.parse(a.start) < Date.parse(b.end) && Date.parse(a.end) > Date.parse(b.start);
}

/**
 * The absences that overlap the session, per student, left out the deleted ones. The store's window test is
 * trusted only as a pre-filter: a child is out for exactly the overlapping ones.
 */
export function absencesOverlapping(
  session: Span,
  absences: Iterable<PreExplainedAbsence & { meta?: { deletedAt: string | null } }>,
): Map<Id, PreExplainedAbsence[]> {
  const out = new Map<Id, PreExplainedAbsence[]>();
  for (const a of absences) {
    if (a.meta?.deletedAt || !overlaps(a, session)) continue;
    const mine = out.get(a.studentId) ?? [];
    mine.push(a);
    out.set(a.studentId, mine);
  }
  return out;
}

/** What the school's records say of the absences of one child for the session, one line each. */
export function absenceWords(
  list: readonly PreExplainedAbsence[],
  session: Span,
  time: (iso: string) => string,
): string {
  return list
    .map((a) => {
      const parts: string[] = [];
      if (a.start > session.start) parts.push(`from ${time(a.start)}`);
      if (a.end < session.end) parts.push(`until ${time(a.end)}`);
      const when = parts.length > 0 ? ` (${parts.join(', ')})` : '';
      // One a family reported on its calendar page says so, without the mark rostercal keeps in the reason.
      const family = familyReportOf(a);
      if (family) return `Family reported${family.words ? `: ${family.words}` : ''}${when}`;
      const reason = a.reason.trim() || 'no reason given';
      return `${a.explained ? 'Pre-explained' : 'Reported'}: ${reason}${when}`;
    })
    .join('\n');
}

/**
 * Why a child is out of the session ('' when expected): their absences that overlap it, or, for a session on the
 * day the service's mark speaks for (it is "absent today" as of the pull), that mark and its reason.
 */
export function whyOut(
  member: Pick<TeamMember, 'absentToday' | 'absentReason'>,
  absences: readonly PreExplainedAbsence[],
  session: Span,
  opts: { sessionIsToday: boolean; time: (iso: string) => string },
): string {
  const said = absences.length > 0 ? absenceWords(absences, session, opts.time) : '';
  if (!said && opts.sessionIsToday && member.absentToday) {
    return `Absent today${member.absentReason?.trim() ? `: ${member.absentReason.trim()}` : ''}`;
  }
  return said;
}
