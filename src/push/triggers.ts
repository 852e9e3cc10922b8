// How pushing joins the rest of rostercal: after every pull (`rostercal sync`, scheduled pulls) and on its own
// schedule (`schools[].schedules.push`). One push per target at a time, in this process and across every process
// and replica sharing the store (on PostgreSQL the target's turn in the job queue, `store.pushTurns`; on SQLite
// the target's own lease, `push_leases`); across replicas the scheduler's queue makes each scheduled fire run once.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SchoolConfig } from '../config.ts';
import type { AfterPullStep } from '../jobs/after-pull-step.ts';
import { keepAlive, processOwner } from '../jobs/heartbeat.ts';
import type { JobDefinition, JobOutcome } from '../jobs/job.ts';
import { SerialQueues } from '../jobs/serial.ts';
import { type Logger, silentLogger } from '../log.ts';
import type { PushFence } from '../store/lease-fence.ts';
import type { Store } from '../store/types.ts';
import { planTarget, pushTarget } from './run.ts';
import { formatPlan, type PushSummary } from './summary.ts';

/** Per target, in this process (across processes and replicas the store orders them: its queue or lease). */
const pushes = new SerialQueues();

/**
 * Pushes of one target run one at a time. A push asked for while another of the same kind waits its turn joins
 * that one instead of queueing behind it: it begins after every pull that asked for it ended, so it carries all
 * of their changes, and pulls every 30 s behind a push slower than that never pile up pushes.
 */
export function serialisedPush(
  store: Pick<Store, 'runs' | 'pushTurns'>,
  target: string,
  kind: string,
  log: Logger,
  push: (fence: PushFence) => Promise<PushSummary>,
): Promise<PushSummary> {
  return pushes.run(target, () => acrossReplicas(store, target, log, push), kind);
}

const LEASE_POLL_MS = 1_000;

/**
 * Holds the target's turn while pushing (PostgreSQL: the job queue's; SQLite: the target's lease in the store):
 * another process or replica pushing it goes first. This process beats meanwhile, so its push run reads as going.
 * The push is given the fence of the target's lease, which its store writes are checked against: one that stalls
 * past its turn and is taken over writes nothing more (store/lease-fence.ts).
 */
async function acrossReplicas<T>(
  store: Pick<Store, 'runs' | 'pushTurns'>,
  target: string,
  log: Logger,
  fn: (fence: PushFence) => Promise<T>,
): Promise<T> {
  const stopBeating = await keepAlive(store, log);
  try {
    if (store.pushTurns) {
      const turn = await store.pushTurns.takeTurn(target, () =>
        log.info(`push of ${target} waits for another process's`),
      );
      try {
        // The queue alone decides whose turn it is; the lease row only carries the fence for the store's writes.
        const lease = await store.runs.seizePushLease(target, processOwner().id, new Date().toISOString());
        return await underLease(store, target, lease, log, fn);
      } finally {
        await turn.release().catch((err: unknown) => log.error({ err }, 'could not give up the push turn'));
      }
    }
    let held: { token: string; fence: number } | null = null;
    for (let told = false; held === null; told = true) {
      const lease = await store.runs.acquirePushLease(target, processOwner().id, new Date().toISOString());
      if (lease.acquired) held = lease;
      else {
        if (!told) log.info({ holder: lease.holder }, `push of ${target} waits for another process's`);
        await sleep(LEASE_POLL_MS, undefined, { ref: false });
      }
    }
    return await underLease(store, target, held, log, fn);
  } finally {
    stopBeating();
  }
}

/** Runs the push under the target's lease as taken (its fence handed on), then frees the lease. */
async function underLease<T>(
  store: Pick<Store, 'runs'>,
  target: string,
  lease: { token: string; fence: number },
  log: Logger,
  fn: (fence: PushFence) => Promise<T>,
): Promise<T> {
  try {
    return await fn({ target, fence: lease.fence });
  } finally {
    await store.runs
      .releasePushLease(target, lease.token)
      .catch((err: unknown) => log.error({ err }, 'could not release the push lease'));
  }
}

export interface PushSchoolOptions {
  store: Store;
  school: SchoolConfig;
  log?: Logger;
  dryRun?: boolean;
  reconcile?: boolean;
  force?: boolean;
  /** Only this target. */
  target?: string;
  now?: () => Date;
  /** DATA_DIR: public calendars follow the feed rotation record even when the database lost it. */
  dataDir?: string;
}

/** Pushes (or plans) every target of a school, one after the other; a failing target does not stop the rest. */
export async function pushSchool(opts: PushSchoolOptions): Promise<PushSummary[]> {
  const log = opts.log ?? silentLogger;
  const targets = opts.school.targets.filter((t) => !opts.target || t.id === opts.target);
  const out: PushSummary[] = [];
  for (const target of targets) {
    const common = {
      store: opts.store,
      school: opts.school,
      target,
      log,
      ...(opts.reconcile ? { reconcile: true } : {}),
      ...(opts.force ? { force: true } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
    };
    out.push(
      opts.dryRun
        ? await planTarget(common)
        : await serialisedPush(
            opts.store,
            `${opts.school.id}/${target.id}`,
            `${opts.reconcile ? 'reconcile' : ''}/${opts.force ? 'force' : ''}`,
            log,
            (fence) => pushTarget({ ...common, fence }),
          ),
    );
  }
  return out;
}

/**
 * For the scheduler's extraJobs: the school's own push schedule (full reconciliation on each fire), on serve's
 * clock (`now`), as its pulls.
 */
export function pushJobs(store: Store, school: SchoolConfig, now: () => Date): JobDefinition[] {
  const cron = school.schedules.push;
  if (!cron || school.targets.length === 0) return [];
  return [
    {
      name: 'push',
      cron,
      run: async ({ log }): Promise<JobOutcome> => {
        try {
          const results = await pushSchool({ store, school, log, reconcile: true, now });
          const failed = results.find((r) => r.status === 'failed');
          // Named as `rostercal sync` names it, so the job's last error says which target and why.
          if (failed)
            return {
              status: 'failed',
              error: `push ${failed.target} (${failed.provider}): ${failed.errors.at(-1) ?? 'failed'}`,
            };
          // Refused by its fence (another push took the target over): said so, not read as a success.
          const lost = results.find((r) => r.status === 'interrupted');
          if (lost)
            return {
              status: 'interrupted',
              error: `push ${lost.target}: ${lost.errors.at(-1) ?? 'interrupted'}`,
            };
          const suspicious = results.find((r) => r.status === 'suspicious');
          if (suspicious) return { status: 'suspicious', error: suspicious.warning };
          return { status: 'succeeded' };
        } catch (err) {
          return { status: 'failed', error: err instanceof Error ? err.message : String(err) };
        }
      },
    },
  ];
}

/** The `rostercal sync` step: push (or, with --dry-run, print the plan) after the pull. */
export const pushStep: AfterPullStep = {
  name: 'push',
  options: {
    'dry-run': {
      type: 'boolean',
      help: 'push: print what would be created, updated and deleted; write nothing',
    },
    'no-push': { type: 'boolean', help: 'pull only' },
    reconcile: { type: 'boolean', help: 'push: compare every calendar with the remote now' },
    force: { type: 'boolean', help: 'push: apply deletions even when there are suspiciously many' },
    target: { type: 'string', help: 'push: only the target with this id' },
  },
  async run(ctx) {
    if (ctx.flags['no-push']) return true;
    if (ctx.school.targets.length === 0) return true;
    const dryRun = Boolean(ctx.flags['dry-run']);
    try {
      const results = await pushSchool({
        store: ctx.store,
        school: ctx.school,
        log: ctx.log,
        dryRun,
        reconcile: Boolean(ctx.flags.reconcile),
        force: Boolean(ctx.flags.force),
        now: ctx.now,
        ...(typeof ctx.flags.target === 'string' ? { target: ctx.flags.target } : {}),
        ...(ctx.dataDir ? { dataDir: ctx.dataDir } : {}),
      });
      for (const r of results) for (const line of formatPlan(r, { verbose: false })) ctx.print(line);
      return results.every((r) => r.status !== 'failed' && r.status !== 'interrupted');
    } catch (err) {
      ctx.print(`push ${ctx.school.id}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    }
  },
};
