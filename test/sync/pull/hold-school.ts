// Another process holding a school for its pull, as that process would: beating as a live owner, and on
// PostgreSQL holding the school's turn in the job queue (its lease row raised to carry the fence), on SQLite the
// school's lease.
import { OWNER_SILENT_MS } from '../../../src/store/liveness.ts';
import type { Store } from '../../../src/store/types.ts';

export interface HeldElsewhere {
  owner: string;
  fence: number;
  release(): Promise<void>;
}

/** The holder's process gone silent, as a dead one's beat is: its last beat older than OWNER_SILENT_MS. */
export async function silence(store: Store, held: HeldElsewhere): Promise<void> {
  const at = new Date(Date.now() - OWNER_SILENT_MS - 1_000).toISOString();
  await store.runs.beat({ id: held.owner, host: 'elsewhere', pid: 1, startedAt: at }, at);
}

export async function holdSchool(store: Store, school: string): Promise<HeldElsewhere> {
  const owner = {
    id: `${school}-other:1:abc`,
    host: 'elsewhere',
    pid: 1,
    startedAt: new Date().toISOString(),
  };
  await store.runs.beat(owner, new Date().toISOString());
  const at = new Date().toISOString();
  if (store.pullTurns) {
    const turn = await store.pullTurns.tryPullTurn(school);
    if (!turn) throw new Error('the turn was not free');
    const fence = await store.runs.seizePullLease(school, owner.id, at, turn.id);
    return { owner: owner.id, fence, release: () => turn.release() };
  }
  const lease = await store.runs.acquirePullLease(school, owner.id, at);
  if (!lease.acquired) throw new Error('the lease was not free');
  return {
    owner: owner.id,
    fence: lease.fence,
    release: () => store.runs.releasePullLease(school, lease.token),
  };
}
