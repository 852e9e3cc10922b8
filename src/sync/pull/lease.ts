// At most one pull of a school at a time, across processes and replicas: the store's pull lease.
import { setTimeout as sleep } from 'node:timers/promises';
import { processOwner } from '../../jobs/heartbeat.ts';
import type { Store } from '../../store/types.ts';
import { abortReason, PullBusyError, PullInterruptedError } from './errors.ts';
import type { PullOptions } from './types.ts';

const LEASE_POLL_MS = 1_000;

type LeaseOptions = Pick<PullOptions, 'whenBusy' | 'onWait' | 'signal'>;

/** Takes the school's pull lease, waiting for another pull as `whenBusy` allows; resolves to its token. */
export async function takeLease(
  store: Pick<Store, 'runs'>,
  schoolId: string,
  opts: LeaseOptions,
): Promise<string> {
  return (await takeFencedLease(store, schoolId, opts)).token;
}

/**
 * As takeLease, with the lease's fence: what the pull's writes are made under (store/lease-fence.ts), so that a
 * pull whose lease was taken over while it stalled writes nothing more.
 */
export async function takeFencedLease(
  store: Pick<Store, 'runs'>,
  schoolId: string,
  opts: LeaseOptions,
): Promise<{ token: string; fence: number }> {
  const owner = processOwner().id;
  const deadline =
    opts.whenBusy === 'queue'
      ? Number.POSITIVE_INFINITY
      : typeof opts.whenBusy === 'number'
        ? Date.now() + opts.whenBusy
        : 0;
  let told = false;
  for (;;) {
    const lease = await store.runs.acquirePullLease(schoolId, owner, new Date().toISOString());
    if (lease.acquired) return { token: lease.token, fence: lease.fence };
    if (Date.now() >= deadline) throw new PullBusyError(schoolId, lease.holder);
    if (!told) opts.onWait?.(lease.holder);
    told = true;
    try {
      await sleep(LEASE_POLL_MS, undefined, opts.signal ? { signal: opts.signal } : {});
    } catch {
      // Stopped while waiting: no run was recorded, and a full-pull request stays for the next pull.
      throw new PullInterruptedError(schoolId, abortReason(opts.signal!), null);
    }
  }
}
