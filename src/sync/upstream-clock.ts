// What `status` and /admin say of the upstream's clock: the latest pull's measure of it, when it is off from this
// server's by more than the `Date` header's resolution and the network's delay.
import type { SchoolId, Store } from '../store/types.ts';
import { describeSkew, skewConsequence } from '../upstream/clock.ts';

export interface UpstreamClockNote {
  skewMs: number;
  runId: number;
  at: string;
  /** "the upstream's clock is 5 min behind this server's (pull #12); …" */
  line: string;
}

/** The latest pull that measured the upstream's clock, said in one line when the skew is notable; else null. */
export async function upstreamClockNote(
  store: Pick<Store, 'runs'>,
  schoolId: SchoolId,
): Promise<UpstreamClockNote | null> {
  // Pushes and pulls that stopped before an answer measure nothing: the latest of a few runs that did.
  const runs = await store.runs.listRuns(schoolId, { limit: 10 });
  const run = runs.find((r) => r.upstreamSkewMs != null);
  const skew = describeSkew(run?.upstreamSkewMs);
  if (!run || !skew) return null;
  return {
    skewMs: run.upstreamSkewMs!,
    runId: run.id,
    at: run.startedAt,
    line: `the upstream's clock is ${skew} (pull #${run.id}); ${skewConsequence(run.upstreamSkewMs!)}, so no edit is lost`,
  };
}
