// After the last stage: public calendars replaced after a rotation (no longer public since the rotation or this
// run's ensure stage) are deleted once their successor holds every event; until then the next run tries again.
// Each replacement is audited with both calendar ids.

import type { Applied } from './apply.ts';
import type { PushContext } from './context.ts';
import { pendingRotations, setPending } from './live-rotation.ts';
import type { CalendarOutcome } from './summary.ts';

export async function retireReplaced(
  ctx: Pick<PushContext, 'store' | 'schoolId' | 'targetId' | 'provider' | 'clock' | 'note' | 'reached'>,
  applied: readonly Applied[],
): Promise<CalendarOutcome[]> {
  const outcomes = applied.map((c) => c.outcome);
  const publicOnes = applied.filter((c) => c.spec.generation !== undefined && c.ref);
  if (!publicOnes.length) return outcomes;
  const { store, schoolId, targetId, provider } = ctx;
  const pending = new Set(await pendingRotations(store, schoolId, targetId));
  for (const c of publicOnes) {
    const complete =
      (c.outcome.state === 'ok' || c.outcome.state === 'created') &&
      c.outcome.counts.failed === 0 &&
      !c.outcome.untrusted;
    if (!complete) {
      if (c.retire.length)
        ctx.note(`${c.spec.key}: the replaced calendar is kept (not public) until the new one is complete`);
      continue;
    }
    const answers = c.retire.length
      ? await (provider.retireCalendars?.(
          c.retire.map((id) => ({ owner: c.ref!.owner, remoteCalendarId: id })),
        ) ?? [])
      : [];
    const deleted = c.retire.filter((_id, i) => answers[i] === null);
    answers.forEach((a, i) => {
      if (a !== null) ctx.note(`${c.spec.key}: replaced calendar ${c.retire[i]} not deleted: ${a}`);
    });
    if (deleted.length === c.retire.length && pending.has(c.spec.key))
      await setPending(store, schoolId, targetId, c.spec.key, false);
    if (!deleted.length) continue;
    const outcome = { ...c.outcome, note: `replaced ${deleted.join(', ')}` };
    outcomes[applied.indexOf(c)] = outcome;
    ctx.reached(outcome);
    const [scope, id] = c.spec.key.split(':');
    await store.access.appendAudit({
      at: ctx.clock().toISOString(),
      action: 'feed-rotate',
      actor: `push (target ${targetId})`,
      schoolId,
      teamId: scope === 'team' ? Number(id) : null,
      sessionId: null,
      template: null,
      clientAddress: null,
      staffSession: null,
      detail: `${c.spec.key}: live Google calendar ${deleted.join(', ')} deleted, replaced by ${c.ref!.remoteCalendarId}`,
    });
  }
  return outcomes;
}
