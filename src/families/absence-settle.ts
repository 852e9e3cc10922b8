// Families' acts whose outcome is not known yet, settled by rostercal itself (issue 40): a report whose answer was
// lost ('unknown'), one whose replica stopped or whose store write failed after sending ('pending' for longer than
// an act takes), an undo whose answer was lost ('undoing'). The child's absences are read back upstream by the mark
// rostercal writes: a report found is reported (the page and the coach's sheet show it); one not found after
// NOT_MADE_AFTER_MS was not made ('not-made': it stands for nothing and counts against no limit), but is looked for
// again every minute for a day, and reported and counted if a late write turns up; an undo is sent again until
// none is left. Every replica runs it (every SETTLE_EVERY_MS): each step is conditional on the act's state, and a
// repeated DELETE finds nothing.
import type { SchoolConfig } from '../config.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { Logger } from '../log.ts';
import type { AbsenceAct, SchoolId } from '../store/types.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { absencesUpstream, FAMILY_REQUEST_TIMEOUT_MS, markedBy } from './absence-upstream.ts';
import type { FamilyStore } from './absences.ts';

export const SETTLE_EVERY_MS = 5_000;
const DAY_MS = 86_400_000;
/** An act under way takes at most two requests and the store's steps: older 'pending' or 'undoing' ones ended. */
const ACT_ENDS_WITHIN_MS = 3 * FAMILY_REQUEST_TIMEOUT_MS;
/** A write not found this long after it was sent was not made (a slow upstream may apply it a little late). */
const NOT_MADE_AFTER_MS = 30_000;
/**
 * An act not made is looked for again this often, for a day after its report (then pruned): a write the upstream
 * applied later still is found, reported and counted against the child's limit. One read per act per minute.
 */
const NOT_MADE_LOOK_EVERY_MS = 60_000;

export interface SettleDeps {
  store: FamilyStore;
  schools: ReadonlyMap<SchoolId, SchoolConfig>;
  clientFor: (school: SchoolConfig) => UpstreamClient;
  now: () => Date;
  log: Logger;
  settle(act: AbsenceAct, made: PreExplainedAbsence): Promise<void>;
  withdrawn(act: AbsenceAct, ids: Id[]): Promise<void>;
}

/** One pass over the acts not settled yet; returns how many it settled. */
export async function settleAbsenceActs(deps: SettleDeps): Promise<number> {
  const now = deps.now().getTime();
  const iso = (ms: number) => new Date(ms).toISOString();
  const acts = [
    ...(await deps.store.families.listUnsettledAbsenceActs(['unknown'], iso(now))),
    ...(await deps.store.families.listUnsettledAbsenceActs(
      ['pending', 'undoing'],
      iso(now - ACT_ENDS_WITHIN_MS),
    )),
    ...(await deps.store.families.listUnsettledAbsenceActs(['not-made'], iso(now - NOT_MADE_LOOK_EVERY_MS))),
  ];
  // A day on, nothing reads an act (the limits count the last day and hour; the session is over).
  await deps.store.families.pruneFamilyActs(iso(now - DAY_MS));
  let settled = 0;
  for (const act of acts) {
    const school = deps.schools.get(act.schoolId);
    if (!school?.families.reportAbsences) continue;
    try {
      if (await settleOne(deps, school, act, now)) settled++;
    } catch (err) {
      // The upstream could not be read (or written): the next pass tries again.
      deps.log.warn({ err, schoolId: act.schoolId }, 'a family report could not be settled yet');
    }
  }
  return settled;
}

async function settleOne(
  deps: SettleDeps,
  school: SchoolConfig,
  act: AbsenceAct,
  now: number,
): Promise<boolean> {
  const client = deps.clientFor(school);
  const made = markedBy(await absencesUpstream(client, act.studentId, act), act.linkId);
  const audit = (detail: string) =>
    deps.store.access
      .appendAudit({
        at: new Date(now).toISOString(),
        action: act.state === 'undoing' ? 'absence-undo' : 'absence-report',
        actor: 'rostercal',
        schoolId: act.schoolId,
        teamId: null,
        sessionId: act.sessionId || null,
        template: null,
        clientAddress: null,
        staffSession: null,
        detail: `student ${act.studentId}: ${detail} (link ${act.linkId})`,
      })
      .catch((err: unknown) => deps.log.error({ err }, 'a settled family report could not be audited'));
  if (act.state === 'undoing') {
    if (made.length > 0) await client.deleteAbsences(made.map((a) => a.id));
    await deps.withdrawn(act, [...(act.absenceId === null ? [] : [act.absenceId]), ...made.map((a) => a.id)]);
    await audit('settled: withdrawn');
    return true;
  }
  if (made[0]) {
    await deps.settle(act, made[0]);
    await audit(`settled: reported (absence ${made[0].id})`);
    return true;
  }
  // Still not there: looked for again in a minute (its reservation's day is the limit: pruned above).
  const lookedAt = { ...act, state: 'not-made' as const, updatedAt: new Date(now).toISOString() };
  if (act.state === 'not-made') {
    await deps.store.families.moveAbsenceAct(lookedAt, ['not-made']);
    return false;
  }
  if (now - Date.parse(act.updatedAt) < NOT_MADE_AFTER_MS) return false;
  if (await deps.store.families.moveAbsenceAct(lookedAt, [act.state])) {
    await audit('settled: not made, nothing was reported');
    return true;
  }
  return false;
}

/** Runs the settle step every SETTLE_EVERY_MS until stopped (one pass at a time). */
export function startSettling(deps: SettleDeps): { stop(): Promise<void> } {
  let running: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    running ??= settleAbsenceActs(deps)
      .catch((err: unknown) => deps.log.warn({ err }, 'settling family reports failed'))
      .finally(() => {
        running = null;
      });
  }, SETTLE_EVERY_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
