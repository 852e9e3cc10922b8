// At most one pull of a school at a time, across processes and replicas. On PostgreSQL the school's turn in the job
// queue (`store.pullTurns`, pg-boss) decides whose pull it is, and the school's row in `pull_leases` only carries the
// fence, raised as the turn is taken; on SQLite (one `serve`, perhaps a `rostercal sync` beside it) the row is the
// lease itself. Either way the pull's writes are made under that fence (store/lease-fence.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Instant } from '../../domain/types.ts';
import { processOwner } from '../../jobs/heartbeat.ts';
import type { Store } from '../../store/types.ts';
import { abortReason, PullBusyError, PullInterruptedError } from './errors.ts';
import type { PullOptions } from './types.ts';

const LEASE_POLL_MS = 1_000;

/**
 * The tokens (on PostgreSQL, the turns' ids) of the pulls this process holds right now. A lease or turn in this
 * process's name that is not among them was left by a pull of this process that has ended, its release refused by
 * a store out of reach at that moment: no liveness check can tell it (the owner is alive), but this process knows
 * it runs no such pull, and takes the school back instead of counting it "already running" until it restarts.
 */
const heldHere = new Set<string>();

type LeaseOptions = Pick<PullOptions, 'whenBusy' | 'onWait' | 'signal'>;
type Holder = { owner: string; since: Instant };

/** The school held by this pull: the fence its writes are made under, and how to let the school go. */
export interface HeldPull {
  fence: number;
  /** From its first call the pull no longer counts as running here, even if the store refuses the release. */
  release(): Promise<void>;
}

/**
 * Takes the school for a pull, waiting for another pull as `whenBusy` allows, with the fence the pull's writes are
 * made under, so that a pull whose school was taken over while it stalled writes nothing more.
 */
export async function takeFencedLease(
  store: Pick<Store, 'runs' | 'pullTurns'>,
  schoolId: string,
  opts: LeaseOptions,
): Promise<HeldPull> {
  const deadline =
    opts.whenBusy === 'queue'
      ? Number.POSITIVE_INFINITY
      : typeof opts.whenBusy === 'number'
        ? Date.now() + opts.whenBusy
        : 0;
  let told = false;
  for (;;) {
    const taken = await takeOnce(store, schoolId);
    if ('fence' in taken) return taken;
    if (Date.now() >= deadline) throw new PullBusyError(schoolId, taken.holder);
    if (!told) opts.onWait?.(taken.holder);
    told = true;
    try {
      await sleep(LEASE_POLL_MS, undefined, opts.signal ? { signal: opts.signal } : {});
    } catch {
      // Stopped while waiting: no run was recorded, and a full-pull request stays for the next pull.
      throw new PullInterruptedError(schoolId, abortReason(opts.signal!), null);
    }
  }
}

/** One ask for the school: held, or who holds it. */
async function takeOnce(
  store: Pick<Store, 'runs' | 'pullTurns'>,
  schoolId: string,
): Promise<HeldPull | { holder: Holder }> {
  const owner = processOwner().id;
  const at = new Date().toISOString();
  if (!store.pullTurns) {
    let lease = await store.runs.acquirePullLease(schoolId, owner, at);
    if (!lease.acquired && leftHere(lease.holder.owner, lease.holder.token)) {
      await store.runs.releasePullLease(schoolId, lease.holder.token);
      lease = await store.runs.acquirePullLease(schoolId, owner, at);
    }
    if (!lease.acquired) return { holder: { owner: lease.holder.owner, since: lease.holder.since } };
    const { token } = lease;
    return heldPull(lease.fence, token, () => store.runs.releasePullLease(schoolId, token));
  }
  const turns = store.pullTurns;
  let turn = await turns.tryPullTurn(schoolId);
  if (!turn) {
    const holder = await store.runs.pullLeaseHolder(schoolId, at);
    // Between its release of the row and of its turn, a holder leaves no name.
    if (!holder) return { holder: { owner: 'another process, just ending', since: at } };
    if (!holder.gone && !leftHere(holder.owner, holder.turn)) return { holder };
    // Known dead by its beat (on its host, at once), or known ended here: its turn ends now, not when pg-boss sees
    // its beats stop.
    await turns.endPullTurn(schoolId, holder.turn);
    turn = await turns.tryPullTurn(schoolId);
    if (!turn) return { holder };
  }
  const taken = turn;
  heldHere.add(taken.id);
  try {
    // The queue alone decides whose turn it is; the lease row carries the fence for the store's writes, and the
    // turn's id, for whoever finds this process dead.
    const fence = await store.runs.seizePullLease(schoolId, owner, at, taken.id);
    // The row is left as it is: the next turn's holder seizes it, and no one else reads it while no turn is held.
    return heldPull(fence, taken.id, () => taken.release());
  } catch (err) {
    heldHere.delete(taken.id);
    await taken.release().catch(() => {});
    throw err;
  }
}

/** Held by this process's name, by no pull of it that still runs. */
function leftHere(owner: string, token: string): boolean {
  return owner === processOwner().id && !heldHere.has(token);
}

/** The school held by this process under `token` until its release is first asked for (done or not). */
function heldPull(fence: number, token: string, release: () => Promise<void>): HeldPull {
  heldHere.add(token);
  return {
    fence,
    release: () => {
      heldHere.delete(token);
      return release();
    },
  };
}
