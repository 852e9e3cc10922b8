// A push run, per target: it keeps a target's remote calendars equal to the projection, with no duplicates and no
// stale events, through edits, cancellations, deletions, crashes, lost state and throttling. Identity is
// recomputable (Google event id, Graph transactionId), so retries and re-runs never duplicate.
//
// This file begins and records the run; its stages are a file each, in the order they run, each taking the
// calendars the one before gave and returning its own (context.ts: what they share):
//   gather.ts      calendars in scope, their desired events and mappings, from the store         → Gathered
//   ensure.ts      each remote calendar found or created                                         → Ensured
//   list.ts        our events in those due for reconciliation                                    → Listed
//   departed.ts    where the sessions of mappings no longer desired stand                        → Examined
//   adopt-plan.ts  the plan (plan.ts, pure) onto each calendar                                   → Planned
//   apply.ts       the writes, in chunks, mappings kept in step (a dry run only counts them)     → Applied
//   retire.ts      replaced public calendars deleted once their successor is complete
import {
  type EventTemplates,
  loadProjectionContext,
  type ProjectionContext,
  projectSession,
} from '../calendar/index.ts';
import type { PushTargetConfig } from '../config/push-targets.ts';
import type { Instant } from '../domain/types.ts';
import { keepAlive, processOwner } from '../jobs/heartbeat.ts';
import { syncWindow } from '../jobs/window.ts';
import { type Logger, silentLogger } from '../log.ts';
import { LeaseLostError, type PushFence } from '../store/lease-fence.ts';
import type { SchoolId, Store } from '../store/types.ts';
import { adoptPlan } from './adopt-plan.ts';
import { applyPlan, countPlanned } from './apply.ts';
import type { PushContext } from './context.ts';
import { lookUpDeparted, planInput } from './departed.ts';
import { ensureCalendars } from './ensure.ts';
import { gather, type ProjectFn } from './gather.ts';
import { listCalendars } from './list.ts';
import { planPush } from './plan.ts';
import type { PushProvider } from './provider.ts';
import { createProvider } from './providers.ts';
import { retireReplaced } from './retire.ts';
import { type CalendarOutcome, type PushSummary, tally } from './summary.ts';

export interface PushOptions {
  store: Pick<Store, 'records' | 'feeds' | 'links' | 'push' | 'runs' | 'access'>;
  /** The school; its wording (config eventTemplatesDir) when it has its own. */
  school: { id: SchoolId; name: string; timeZone: string; eventTemplates?: EventTemplates | undefined };
  target: PushTargetConfig;
  /** The projection (default projectSession): the only thing that decides what an event says. */
  project?: ProjectFn;
  /** Projection context (default: loaded from the store). */
  context?: ProjectionContext;
  now?: () => Date;
  /** Plan only: read (store and remote listings), never write. */
  dryRun?: boolean;
  /** Reconcile every calendar with the remote now, whatever the schedule. */
  reconcile?: boolean;
  /** Apply deletions even when their number trips the guard. */
  force?: boolean;
  log?: Logger;
  /** Provider override (tests, benchmarks); default from the target's settings. */
  provider?: PushProvider;
  /** Writes per chunk between mapping saves. */
  chunkSize?: number;
  /**
   * DATA_DIR, where the feed rotation record is: a public calendar's generation is never below the feed's
   * recorded rotations, so a lost database cannot bring back (and re-publish) a replaced calendar.
   */
  dataDir?: string;
  /**
   * The target's lease as this push holds it (triggers.ts): every write of the target's calendars and mappings
   * commits only while it is held, so a push that stalled past its turn and was taken over writes nothing more.
   */
  fence?: PushFence;
}

const MAX_ERRORS = 100;

export async function pushTarget(opts: PushOptions): Promise<PushSummary> {
  return run({ ...opts, dryRun: opts.dryRun ?? false });
}

/** The plan of a push without writing anything: what `rostercal sync --dry-run` prints (see formatPlan). */
export async function planTarget(opts: Omit<PushOptions, 'dryRun'>): Promise<PushSummary> {
  return run({ ...opts, dryRun: true });
}

async function run(opts: PushOptions & { dryRun: boolean }): Promise<PushSummary> {
  // A recorded run belongs to this process, which beats while it goes (see jobs/heartbeat.ts).
  const stopBeating = opts.dryRun ? null : await keepAlive(opts.store, opts.log);
  try {
    return await runPush(opts);
  } finally {
    stopBeating?.();
  }
}

/** What the run's beginning and its record share around the stages. */
interface Run {
  opts: PushOptions & { dryRun: boolean };
  log: Logger;
  started: Date;
  t0: number;
  window: { from: Instant; to: Instant };
  runId: number | null;
  errors: string[];
  ctx: PushContext;
  /**
   * How far the run got: each calendar's outcome as the stages reached it, and the planner's warnings. What a
   * run that fails half-way records.
   */
  reached: { outcomes: Map<string, Readonly<CalendarOutcome>>; warnings: string[] };
}

async function runPush(opts: PushOptions & { dryRun: boolean }): Promise<PushSummary> {
  const run = await begin(opts);
  let outcomes: CalendarOutcome[] | null = null;
  let fatal: unknown = null;
  try {
    outcomes = await runStages(run);
  } catch (err) {
    fatal = err;
    if (err instanceof LeaseLostError) {
      // Taken over while it stalled: the push that took the target goes on; this one ends, having written no more.
      run.ctx.note(`push interrupted: ${err.message}`);
      run.log.warn({ fence: err.fence }, `push interrupted: ${err.message}`);
    } else {
      run.ctx.note(`push failed: ${err instanceof Error ? err.message : String(err)}`);
      run.log.error({ err }, 'push failed');
    }
  }
  const summary = await recordRun(run, outcomes ?? [...run.reached.outcomes.values()], fatal);
  // A real run is recorded as failed and reported through its summary; a dry run has no record to show.
  if (fatal && opts.dryRun) throw fatal;
  return summary;
}

/** The stages, in order: each takes what the one before gave. */
async function runStages(run: Run): Promise<CalendarOutcome[]> {
  const { opts, ctx, window } = run;
  const { store, school, target, dryRun } = opts;
  const reach = (calendars: readonly { outcome: Readonly<CalendarOutcome> }[]) => {
    for (const c of calendars) ctx.reached(c.outcome);
  };
  const wording = school.eventTemplates ? { templates: school.eventTemplates } : {};
  const context = opts.context ?? (await loadProjectionContext(store, school.id, wording));
  const gathered = await gather({
    store,
    school,
    target,
    window,
    now: ctx.startedAt,
    context,
    project: opts.project ?? projectSession,
    provider: ctx.provider,
    dryRun,
    note: ctx.note,
    ...(opts.dataDir ? { dataDir: opts.dataDir } : {}),
  });
  reach(gathered);
  run.log.info({ step: 'calendars', calendars: gathered.length }, 'push step');
  const ensured = await ensureCalendars(ctx, gathered);
  run.log.info({ step: 'listing' }, 'push step');
  const dueBefore = new Date(run.started.getTime() - target.reconcileEveryHours * 3_600_000).toISOString();
  const listed = await listCalendars(
    ctx,
    ensured,
    { reconcileAll: opts.reconcile ?? false, dueBefore },
    window,
  );
  const examined = await lookUpDeparted(ctx, listed);
  const plan = planPush(examined.map(planInput), {
    schoolId: school.id,
    target: target.id,
    window,
    maxShrinkFraction: target.maxShrinkFraction,
    force: opts.force ?? false,
    at: ctx.startedAt,
    eventIdFor: (identity) => ctx.provider.eventIdFor(identity),
  });
  run.reached.warnings = plan.warnings;
  const planned = adoptPlan(examined, plan);
  reach(planned);
  if (dryRun) return countPlanned(planned).map((c) => c.outcome);
  run.log.info({ step: 'writing' }, 'push step');
  const applied = await applyPlan(ctx, planned);
  reach(applied);
  return retireReplaced(ctx, applied);
}

/** The run's clock, window, provider and record, and the context its stages share. */
async function begin(opts: PushOptions & { dryRun: boolean }): Promise<Run> {
  const { store, school, target, dryRun } = opts;
  const log = (opts.log ?? silentLogger).child({ school: school.id, target: target.id, dryRun });
  const clock = opts.now ?? (() => new Date());
  const started = clock();
  const startedAt = started.toISOString();
  const t0 = performance.now();
  const window = syncWindow(started, target.window);
  const provider = opts.provider ?? (await createProvider(school.id, target));
  const errors: string[] = [];
  const note = (msg: string) => {
    if (errors.length < MAX_ERRORS) errors.push(msg);
    else if (errors.length === MAX_ERRORS) errors.push('… more problems not listed');
  };
  const runId = dryRun
    ? null
    : await store.runs.startRun({
        schoolId: school.id,
        kind: 'push',
        target: target.id,
        at: startedAt,
        owner: processOwner().id,
      });
  // At info, with each remote step below: a push that never ends shows in serve's log where it waits.
  const timeoutMs =
    target.provider === 'google' ? target.google.requestTimeoutMs : target.outlook.requestTimeoutMs;
  log.info(
    { runId, provider: target.provider, requestTimeoutMs: timeoutMs },
    dryRun ? 'push planning' : 'push started',
  );
  const reached: Run['reached'] = { outcomes: new Map(), warnings: [] };
  const ctx: PushContext = {
    store: {
      records: store.records,
      access: store.access,
      push: opts.fence ? store.push.fencedBy(opts.fence) : store.push,
    },
    schoolId: school.id,
    targetId: target.id,
    provider,
    dryRun,
    startedAt,
    clock,
    log,
    note,
    chunkSize: opts.chunkSize ?? 400,
    pauseMinutes: target.provider === 'google' ? target.google.pauseMinutes : 60,
    reached: (outcome) => reached.outcomes.set(outcome.key, outcome),
  };
  return { opts, log, started, t0, window, runId, errors, ctx, reached };
}

async function recordRun(run: Run, outcomes: CalendarOutcome[], fatal: unknown): Promise<PushSummary> {
  const { opts, runId, errors, ctx } = run;
  const finished = ctx.clock();
  const { warnings } = run.reached;
  const warning = warnings.length ? warnings.join('; ') : null;
  const tallied = tally(outcomes, Boolean(fatal), warning);
  const { totals, counts } = tallied;
  const status = fatal instanceof LeaseLostError ? 'interrupted' : tallied.status;
  const pstats = ctx.provider.stats();
  const summary: PushSummary = {
    runId,
    schoolId: opts.school.id,
    target: opts.target.id,
    provider: opts.target.provider,
    dryRun: opts.dryRun,
    status,
    startedAt: ctx.startedAt,
    finishedAt: finished.toISOString(),
    durationMs: Math.round(performance.now() - run.t0),
    window: run.window,
    totals,
    calendars: outcomes,
    requests: pstats.requests,
    retries: pstats.retries,
    throttled: pstats.throttled,
    errors,
    warning,
  };
  if (runId !== null) {
    await opts.store.runs.finishRun(runId, {
      status,
      finishedAt: summary.finishedAt,
      counts,
      upstreamRequests: pstats.requests,
      retries: pstats.retries,
      throttled: pstats.throttled,
      errors,
      warning,
    });
  }
  run.log.info(
    { status, ...totals, requests: pstats.requests, throttled: pstats.throttled, ms: summary.durationMs },
    opts.dryRun ? 'push planned' : 'push finished',
  );
  return summary;
}
