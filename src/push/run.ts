// A push run, per target, top-down: gather (calendars in scope, desired events, mappings) -> ensure the remote
// calendars -> list those due for reconciliation -> plan (pure, plan.ts) -> apply (apply.ts) -> record the run.
// It keeps a target's remote calendars equal to the projection, with no duplicates and no stale events, through
// edits, cancellations, deletions, crashes, lost state and throttling. Identity is recomputable (Google event
// id, Graph transactionId), so retries and re-runs never duplicate.
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
import type { SchoolId, Store } from '../store/types.ts';
import { type ApplyStep, applyPlan, pauseCalendar } from './apply.ts';
import { type CalendarWork, gather, lookUpDeparted, type ProjectFn, planInput } from './gather.ts';
import { pendingRotations, setPending } from './live-rotation.ts';
import { type PushPlan, planPush } from './plan.ts';
import type { PushProvider } from './provider.ts';
import { createProvider } from './providers.ts';
import { dueForListing, ensureCalendars, listCalendars, type RemoteStep } from './remote.ts';
import { type PushSummary, tally } from './summary.ts';

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

/** What every step of one run shares. */
interface Run {
  opts: PushOptions & { dryRun: boolean };
  log: Logger;
  clock: () => Date;
  started: Date;
  startedAt: Instant;
  t0: number;
  window: { from: Instant; to: Instant };
  provider: PushProvider;
  runId: number | null;
  errors: string[];
  note: (msg: string) => void;
  remote: RemoteStep;
  applying: ApplyStep;
}

async function runPush(opts: PushOptions & { dryRun: boolean }): Promise<PushSummary> {
  const run = await begin(opts);
  const { store, school, target, dryRun } = opts;
  let works: CalendarWork[] = [];
  let warnings: string[] = [];
  let fatal: unknown = null;
  try {
    const wording = school.eventTemplates ? { templates: school.eventTemplates } : {};
    const context = opts.context ?? (await loadProjectionContext(store, school.id, wording));
    const project = opts.project ?? projectSession;
    const { window, provider, note, startedAt: now } = run;
    const dataDir = opts.dataDir;
    works = await gather({
      store,
      school,
      target,
      window,
      now,
      context,
      project,
      provider,
      dryRun,
      note,
      ...(dataDir ? { dataDir } : {}),
    });
    run.log.info({ step: 'calendars', calendars: works.length }, 'push step');
    await ensureCalendars(run.remote, works);
    run.log.info({ step: 'listing' }, 'push step');
    const dueBefore = new Date(run.started.getTime() - target.reconcileEveryHours * 3_600_000).toISOString();
    await listCalendars(run.remote, dueForListing(works, opts.reconcile ?? false, dueBefore), window);
    await lookUpDeparted(store, school.id, works);
    const plan = planPush(works.map(planInput), {
      schoolId: school.id,
      target: target.id,
      window,
      maxShrinkFraction: target.maxShrinkFraction,
      force: opts.force ?? false,
      at: run.startedAt,
      eventIdFor: (identity) => provider.eventIdFor(identity),
    });
    warnings = plan.warnings;
    adoptPlan(works, plan);
    if (dryRun) countPlanned(works);
    else {
      run.log.info({ step: 'writing' }, 'push step');
      await applyPlan(run.applying, works);
      await retireReplaced(run, works);
    }
  } catch (err) {
    fatal = err;
    run.note(`push failed: ${err instanceof Error ? err.message : String(err)}`);
    run.log.error({ err }, 'push failed');
  }
  const summary = await recordRun(run, works, warnings, fatal);
  // A real run is recorded as failed and reported through its summary; a dry run has no record to show.
  if (fatal && dryRun) throw fatal;
  return summary;
}

/**
 * Public calendars replaced after a rotation (no longer public since the rotation or this run's ensure step) are
 * deleted once their successor holds every event; until then the next run tries again. Each replacement is
 * audited with both calendar ids.
 */
async function retireReplaced(run: Run, works: CalendarWork[]): Promise<void> {
  const { provider, opts } = run;
  const publicWorks = works.filter((w) => w.spec.generation !== undefined && w.ref);
  if (!publicWorks.length) return;
  const pending = new Set(await pendingRotations(opts.store, opts.school.id, opts.target.id));
  for (const w of publicWorks) {
    const complete =
      (w.outcome.state === 'ok' || w.outcome.state === 'created') &&
      w.outcome.counts.failed === 0 &&
      !w.outcome.untrusted;
    if (!complete) {
      if (w.retire.length)
        run.note(`${w.spec.key}: the replaced calendar is kept (not public) until the new one is complete`);
      continue;
    }
    const answers = w.retire.length
      ? await (provider.retireCalendars?.(
          w.retire.map((id) => ({ owner: w.ref!.owner, remoteCalendarId: id })),
        ) ?? [])
      : [];
    const deleted = w.retire.filter((_id, i) => answers[i] === null);
    answers.forEach((a, i) => {
      if (a !== null) run.note(`${w.spec.key}: replaced calendar ${w.retire[i]} not deleted: ${a}`);
    });
    if (deleted.length === w.retire.length && pending.has(w.spec.key))
      await setPending(opts.store, opts.school.id, opts.target.id, w.spec.key, false);
    if (!deleted.length) continue;
    w.outcome.note = `replaced ${deleted.join(', ')}`;
    const [scope, id] = w.spec.key.split(':');
    await opts.store.access.appendAudit({
      at: run.clock().toISOString(),
      action: 'feed-rotate',
      actor: `push (target ${opts.target.id})`,
      schoolId: opts.school.id,
      teamId: scope === 'team' ? Number(id) : null,
      sessionId: null,
      template: null,
      clientAddress: null,
      staffSession: null,
      detail: `${w.spec.key}: live Google calendar ${deleted.join(', ')} deleted, replaced by ${w.ref!.remoteCalendarId}`,
    });
  }
}

/** The run's clock, window, provider and record, and the settings its steps share. */
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
  const common = { store, schoolId: school.id, targetId: target.id, provider, note };
  const applying: ApplyStep = {
    ...common,
    chunkSize: opts.chunkSize ?? 400,
    pauseMinutes: target.provider === 'google' ? target.google.pauseMinutes : 60,
    at: startedAt,
    clock,
    log,
  };
  const remote: RemoteStep = {
    ...common,
    dryRun,
    startedAt,
    pause: (w) => (dryRun ? Promise.resolve() : pauseCalendar(applying, w)),
  };
  return {
    opts,
    log,
    clock,
    started,
    startedAt,
    t0,
    window,
    provider,
    runId,
    errors,
    note,
    remote,
    applying,
  };
}

/** The plan's operations and mapping bookkeeping onto each calendar's work, its findings onto the outcome. */
function adoptPlan(works: CalendarWork[], plan: PushPlan): void {
  plan.calendars.forEach((p, i) => {
    const w = works[i]!;
    w.ops = p.ops;
    w.adopt = p.adopt;
    w.forget = p.forget;
    w.outcome.counts.unchanged += p.unchanged;
    if (p.reconciled) w.outcome.reconciled = true;
    if (p.untrusted) w.outcome.untrusted = true;
    w.outcome.ops?.push(...p.planned);
  });
}

/** A dry run counts what it would write. */
function countPlanned(works: CalendarWork[]): void {
  for (const w of works)
    for (const op of w.ops) {
      if (op.kind === 'create') w.outcome.counts.created++;
      else if (op.kind === 'update') w.outcome.counts.updated++;
      else w.outcome.counts.deleted++;
    }
}

async function recordRun(
  run: Run,
  works: CalendarWork[],
  warnings: string[],
  fatal: unknown,
): Promise<PushSummary> {
  const { opts, runId, errors } = run;
  const finished = run.clock();
  const outcomes = works.map((w) => w.outcome);
  const warning = warnings.length ? warnings.join('; ') : null;
  const { totals, counts, status } = tally(outcomes, Boolean(fatal), warning);
  const pstats = run.provider.stats();
  const summary: PushSummary = {
    runId,
    schoolId: opts.school.id,
    target: opts.target.id,
    provider: opts.target.provider,
    dryRun: opts.dryRun,
    status,
    startedAt: run.startedAt,
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
