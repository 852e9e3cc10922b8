// The fifth stage (→ Planned): the planner's operations and mapping bookkeeping (plan.ts, pure) taken onto each
// calendar, its findings onto the calendar's outcome. What the planner read (the listing, the departed sessions)
// stays behind: the applier cannot see it.
import type { Id } from '../domain/types.ts';
import type { PushMapping } from '../store/types.ts';
import type { Examined } from './departed.ts';
import type { Ensured } from './ensure.ts';
import type { PushPlan } from './plan.ts';
import type { WriteOp } from './provider.ts';
import type { CalendarOutcome } from './summary.ts';

/** A calendar with its plan: all that the applier reads. */
export interface Planned
  extends Pick<Ensured, 'spec' | 'stored' | 'ref' | 'outcome' | 'desired' | 'mappings' | 'retire'> {
  readonly ops: readonly WriteOp[];
  /** Mappings to (re)write without a remote write (adoptions of unchanged events). */
  readonly adopt: readonly PushMapping[];
  /** Mappings to drop without a remote write (nothing remote to delete). */
  readonly forget: readonly Id[];
}

/** `plan.calendars[i]` is the plan of `examined[i]`. */
export function adoptPlan(examined: readonly Examined[], plan: PushPlan): Planned[] {
  return examined.map((c, i) => {
    const p = plan.calendars[i]!;
    const o = c.outcome;
    const outcome: CalendarOutcome = {
      ...o,
      counts: { ...o.counts, unchanged: o.counts.unchanged + p.unchanged },
      ...(p.reconciled ? { reconciled: true } : {}),
      ...(p.untrusted ? { untrusted: true } : {}),
      ...(o.ops ? { ops: [...o.ops, ...p.planned] } : {}),
    };
    const { spec, stored, ref, desired, mappings, retire } = c;
    return {
      spec,
      stored,
      ref,
      outcome,
      desired,
      mappings,
      retire,
      ops: p.ops,
      adopt: p.adopt,
      forget: p.forget,
    };
  });
}
