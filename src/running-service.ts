// The running service behind `rostercal serve` (and `npm start`): store, the sync side (demo sandbox, clients,
// first pull, scheduler), pre-rendered feeds, rosters, the staff dashboard and the web server, wired together once.
// Each part stays ignorant of the others; this file is the only place that knows them all.

import { clockStartingAt } from './config/sandbox-clock.ts';
import type { Config, SchoolConfig } from './config.ts';
import { startSettling } from './families/absence-settle.ts';
import { clearRefusal } from './families/absence-state.ts';
import { familyClients } from './families/absence-upstream.ts';
import { FamilyAbsences } from './families/absences.ts';
import { CalendarSearch, searchIndexAfterPull } from './feeds/calendar-search.ts';
import { listFeedDefs } from './feeds/feed-defs.ts';
import { FeedService } from './feeds/feed-service.ts';
import { feedsAfterPull, storeFeedsOf } from './feeds/feeds-after-pull.ts';
import { workerRenderer } from './feeds/school-renderer.ts';
import type { FeedTokens } from './feeds/tokens.ts';
import { feedTokensAfterPull, prepareFeedTokens, type RotationGuard } from './feeds/trust.ts';
import { type DemoPerson, pickDemoStaff } from './identity/demo-people.ts';
import type { AfterPullStep } from './jobs/after-pull-step.ts';
import { processOwner } from './jobs/heartbeat.ts';
import type { PullSummary } from './jobs/pull-summary.ts';
import { type Logger, silentLogger } from './log.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { liveGoogleCalendars } from './push/family-calendars.ts';
import { pushJobs, pushSchool, pushStep } from './push/triggers.ts';
import { openStoreFor } from './store/index.ts';
import type { FeedScope, Store } from './store/types.ts';
import { startSyncService } from './sync/background-sync.ts';
import { MAX_MS as MAX_PACE_DEFERRAL_MS } from './sync/pace.ts';
import type { SchedulerHandle } from './sync/scheduler.ts';
import { createApp } from './web/app.ts';
import { metricsApp } from './web/metrics-access.ts';
import { type RunningServer, startServer } from './web/server.ts';
import { createStaffWeb, type StaffWebSettings } from './web/staff-web.ts';
import { StoreTrouble } from './web/store-trouble.ts';

export interface ServiceOptions {
  config: Config;
  log?: Logger;
  /** Overrides config.port (0 = any free port; tests). */
  port?: number;
  host?: string;
  /** Pull each school once at start when it has never been pulled (default true). */
  initialPull?: boolean;
  /** Staff access to rosters and the admin pages (ADMIN_TOKEN); without one, those routes admit nobody. */
  adminToken?: string | null;
  /** Overrides config.auth (identity provider, session lengths, sensitive roles, audit retention): tests. */
  staff?: Partial<Omit<StaffWebSettings, 'adminToken' | 'demo'>>;
  /** Called for each line worth showing a person at the terminal. */
  say?: (line: string) => void;
}

export interface SampleFeed {
  schoolId: string;
  scope: FeedScope;
  name: string;
  url: string;
}

export interface RunningService {
  url: string;
  /** /metrics on its own listen address (METRICS_PORT), or null. */
  metricsUrl: string | null;
  /** Where the demo sandbox listens, when a demo school is configured. */
  sandboxUrl: string | null;
  config: Config;
  store: Store;
  feeds: FeedService;
  metrics: Metrics;
  scheduler: SchedulerHandle;
  /** The admins' search index per school: made after pulls and at start, not by an admin's first search. */
  search: Pick<CalendarSearch, 'state'>;
  /** The demo's sign-in choices (demo mode only; empty otherwise). */
  demoPeople(): Promise<DemoPerson[]>;
  /** Settles when the start-up pulls (demo schools, never-pulled schools) are done. */
  initialPulls: Promise<void>;
  /** One working feed URL per scope kind of the first school (for the demo banner). */
  sampleFeeds(): Promise<SampleFeed[]>;
  close(): Promise<void>;
}

type Cleanup = (() => Promise<void>)[];

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const log = opts.log ?? silentLogger;
  const say = opts.say ?? (() => {});
  // Its event loop answers feed requests while pulls and re-renders write: SQLite checkpoints go to a worker.
  const store = await openStoreFor(opts.config, { checkpointsOffThread: true });
  const cleanup: Cleanup = [() => store.close()];
  // "Today" for pages, families' acts, feeds, pulls' windows, readiness: real unless SANDBOX_NOW (sandbox only).
  const now = clockStartingAt(opts.config.sandboxNow ?? null);
  try {
    await registerSchools(store, opts.config, say, log);
    const { tokens, guard } = await openFeedTokens(store, opts.config, cleanup, say, log);
    const metrics = createMetrics();
    const output = startFeedOutput(store, opts.config, metrics, log, now);
    const search = new CalendarSearch(store);
    const sync = await startSyncService({
      config: opts.config,
      store,
      log,
      initialPull: (opts.initialPull ?? true) ? 'auto' : 'none',
      onPull: afterPull(store, log, now, stepsAfterPull({ tokens, guard, metrics, search })),
      storeOutputs: (school) => output.storeOutputs(school.id),
      // From a pull's first write to the end of its re-render, requests answer the stored bytes (FeedService).
      whilePulling: (school) => output.feeds.holdRenders(school.id),
      // Pushes also run on their own schedule (schools[].schedules.push), besides after each pull.
      extraJobs: (school) => pushJobs(store, school, now),
      now,
    });
    cleanup.unshift(() => sync.stop());
    // Before the scheduler stops: a re-render under way ends now instead of holding the pull's last step.
    cleanup.unshift(() => output.renderer.close());
    const config = sync.config;
    cleanup.unshift(prepareSearch(search, config, sync.initialPulls, log));
    if (sync.demoUrl) say(`demo sandbox school served at ${sync.demoUrl}`);
    const rotations = rotationPushes(store, config, log, now);
    cleanup.unshift(() => rotations.settle());

    // A refusal to write absences (403) is remembered until serve starts again: perhaps with a token that may.
    if (!store.readOnly)
      for (const s of config.schools) if (s.families.reportAbsences) await clearRefusal(store, s.id);
    // A family's act has a short budget of its own (not the pull's retries); acts whose answer was lost are settled
    // by reading them back, every few seconds, on every replica.
    const absences = new FamilyAbsences({
      store,
      schools: config.schools,
      clientFor: familyClients(),
      log,
      now,
    });
    if (!store.readOnly && config.schools.some((s) => s.families.reportAbsences)) {
      const settling = startSettling(absences.settleDeps);
      cleanup.unshift(() => settling.stop());
    }
    const demoMode = config.schools.every((s) => s.demo);
    const staff = await staffWeb({
      opts,
      config,
      store,
      tokens,
      log,
      demoMode,
      onLiveRotated: rotations.push,
      search,
      now,
    });
    const app = createApp({
      store,
      feeds: output.feeds,
      metrics,
      publicUrl: config.publicUrl,
      logger: log,
      demo: config.schools.some((s) => s.demo),
      liveGoogleCalendar: liveGoogleCalendars(store, config.schools),
      feedGuard: guard,
      absences,
      now,
      ...(config.trustProxy !== undefined ? { trustProxy: config.trustProxy } : {}),
      ...(config.feedRateLimit ? { feedRateLimit: config.feedRateLimit } : {}),
      metricsToken: config.metricsToken ?? null,
      routers: { '/': staff.router },
      readiness: readiness(store, config, sync, output.trouble, now),
    });
    const server: RunningServer = await startServer(app, {
      port: opts.port ?? config.port,
      ...(opts.host ? { host: opts.host } : {}),
    });
    cleanup.unshift(() => server.close());
    const metricsServer = config.metrics
      ? await startServer(metricsApp({ metrics, token: config.metricsToken ?? null }), {
          port: config.metrics.port,
          host: config.metrics.host ?? '0.0.0.0',
          portSetting: 'METRICS_PORT',
        })
      : null;
    if (metricsServer) cleanup.unshift(() => metricsServer.close());
    staff.start();
    cleanup.unshift(async () => staff.stop());

    return {
      url: server.url,
      metricsUrl: metricsServer ? `${metricsServer.url}/metrics` : null,
      sandboxUrl: sync.demoUrl,
      config,
      store,
      feeds: output.feeds,
      metrics,
      scheduler: sync.scheduler,
      search,
      initialPulls: sync.initialPulls,
      demoPeople: () => (demoMode ? demoPeople(store, config.schools[0]!.id) : Promise.resolve([])),
      sampleFeeds: () => sampleFeeds(store, config, output.feeds, { tokens, guard }),
      async close() {
        for (const step of cleanup) await step().catch((err) => log.error({ err }, 'shutdown step failed'));
      },
    };
  } catch (err) {
    for (const step of cleanup) await step().catch(() => {});
    throw err;
  }
}

/** Every configured school in the store; a store that can only be read is served as it is. */
async function registerSchools(
  store: Pick<Store, 'records' | 'readOnly'>,
  config: Config,
  say: (line: string) => void,
  log: Logger,
) {
  if (!store.readOnly) {
    for (const s of config.schools)
      await store.records.upsertSchool({ id: s.id, name: s.name, timeZone: s.timeZone });
    return;
  }
  // Serving must not depend on writing.
  say(
    `the store can be read but not written (${store.readOnly}): serving what it has; no pull until it can be written and serve starts again`,
  );
  log.error({ reason: store.readOnly }, 'store opened read-only');
  const known = new Set((await store.records.listSchools()).map((s) => s.id));
  for (const s of config.schools)
    if (!known.has(s.id)) say(`${s.id}: not in the store, which cannot record it: nothing of it to serve`);
}

/** Refuses to start with a feed secret that did not make the store's feeds; repairs rotations the store lost. */
async function openFeedTokens(
  store: Store,
  config: Config,
  cleanup: Cleanup,
  say: (line: string) => void,
  log: Logger,
) {
  const { tokens, guard, notes, journal } = await prepareFeedTokens({
    store,
    dataDir: config.dataDir,
    secret: config.feedSecret,
    schools: config.schools.map((s) => s.id),
  });
  for (const line of notes) say(line);
  for (const [school, why] of guard.unsure) {
    say(`${school}: ${why}`);
    log.error({ school }, why);
  }
  // This DATA_DIR keeps a copy of the store's rotation record: at start (above), every few seconds, at the end.
  await guard.mirror();
  guard.start((err) => log.error({ err, file: journal.file }, 'copying the feed rotation record failed'));
  cleanup.unshift(() => guard.stop());
  return { tokens, guard };
}

/** Feeds as requests read them, their re-render after each pull (on a worker), and the store's write trouble. */
function startFeedOutput(store: Store, config: Config, metrics: Metrics, log: Logger, now: () => Date) {
  const onRender = (info: Parameters<typeof metrics.observeFeedRender>[0]) => metrics.observeFeedRender(info);
  // The school's wording: the same for feeds, landing pages (which read the feeds), pushes and rosters.
  const templates = (schoolId: string) => config.schools.find((s) => s.id === schoolId)?.eventTemplates;
  // Requests are answered from what the store has even when it refuses their writes; readiness says so.
  const trouble = new StoreTrouble({ checkIntegrity: () => store.checkIntegrity() });
  // The first check starts now: the first /readyz need not wait for all of it.
  void trouble.damage();
  const FEED_RENDERS = 'feed renders';
  const onRequestWrite = (err: unknown) => {
    if (trouble.write(FEED_RENDERS, err))
      log.error(
        { reason: (err as Error).message },
        'a feed render could not be stored: feeds are answered from memory until the store takes writes again',
      );
  };
  const feeds = new FeedService({ store, onRender, templates, onRequestWrite, now });
  // Passes after a pull run on a worker thread: requests never wait on them. Passes of all schools share a few
  // workers; a pull whose school's pass waits for one holds its lock meanwhile (see school-renderer.ts).
  const renderer = workerRenderer({
    feeds,
    store: config.databaseUrl ? { databaseUrl: config.databaseUrl } : { dataDir: config.dataDir },
    templates,
    onRender,
    onFallback: (reason) => log.warn({ reason }, 'feed re-render ran in-process: its worker could not'),
    onLoad: (load) => metrics.observeRenderLoad(load),
    onWorkerStart: () => metrics.feedRenderThreads.inc(),
  });
  // Inside each pull, before its run is recorded: feed re-rendering (so a request costs a lookup); a pass that
  // cannot store its renders fails the run. A pass that stored every render: the store takes them again.
  const storeOutputs = storeFeedsOf({
    feeds: renderer,
    log,
    onStored: (err) => trouble.write(FEED_RENDERS, err),
  });
  return { feeds, renderer, storeOutputs, trouble };
}

/** After every pull, in order. */
function stepsAfterPull(parts: {
  tokens: FeedTokens;
  guard: RotationGuard;
  metrics: Metrics;
  search: CalendarSearch;
}): AfterPullStep[] {
  return [
    // Feed tokens a lost database forgot, metrics, then pushing.
    feedTokensAfterPull({ tokens: parts.tokens, guard: parts.guard }),
    feedsAfterPull({ metrics: parts.metrics }),
    pushStep,
    // Last, and never failing the pull: the admins' search index, so no admin's first search makes it.
    searchIndexAfterPull(parts.search),
  ];
}

/**
 * Once the start-up pulls are done, the index of every school that had none (pulled before this start): an
 * admin's first search after a restart answers from it too. Failures are logged; the search then makes it.
 */
function prepareSearch(
  search: CalendarSearch,
  config: Config,
  initialPulls: Promise<void>,
  log: Logger,
): () => Promise<void> {
  let stopped = false;
  let building: Promise<void> = Promise.resolve();
  void (async () => {
    await initialPulls.catch(() => {});
    for (const school of config.schools) {
      if (stopped) return;
      building = search
        .prepare(school.id)
        .catch((err) => log.warn({ err, school: school.id }, 'search index not made at start'));
      await building;
    }
  })();
  // Shutdown stops it and waits for a build under way only (never for the start-up pulls): a build must not
  // read a store being closed.
  return async () => {
    stopped = true;
    await building;
  };
}

function afterPull(store: Store, log: Logger, now: () => Date, steps: AfterPullStep[]) {
  return async (school: SchoolConfig, summary: PullSummary) => {
    for (const step of steps) {
      await step.run({ store, school, summary, log, now, flags: {}, print: (line) => log.info(line) });
    }
  };
}

/**
 * A rotation from /admin replaced a live Google calendar: its target is pushed now, so the old calendar is
 * deleted and the new one filled and offered within the push's time, not at the next pull or push fire.
 */
function rotationPushes(store: Store, config: Config, log: Logger, now: () => Date) {
  const running = new Set<Promise<unknown>>();
  const push = (schoolId: string, targetIds: string[]) => {
    const school = config.schools.find((s) => s.id === schoolId);
    if (!school) return;
    for (const target of targetIds) {
      const p = pushSchool({ store, school, log, target, now })
        .then((results) => {
          for (const r of results)
            if (r.status === 'failed')
              log.error(
                { school: schoolId, target, error: r.errors.at(-1) },
                'push after a rotation failed: the next push finishes the rotation',
              );
        })
        .catch((err) => log.error({ err, school: schoolId, target }, 'push after a rotation failed'))
        .finally(() => running.delete(p));
      running.add(p);
    }
  };
  return {
    push,
    settle: async () => {
      await Promise.allSettled([...running]);
    },
  };
}

async function staffWeb(parts: {
  opts: ServiceOptions;
  config: Config;
  store: Store;
  tokens: FeedTokens;
  log: Logger;
  demoMode: boolean;
  onLiveRotated: (schoolId: string, targetIds: string[]) => void;
  search: CalendarSearch;
  now: () => Date;
}) {
  const { opts, config, store, demoMode } = parts;
  const auth = { ...config.auth, ...opts.staff };
  // The demo's OpenID provider is loaded only when it runs: production never loads oidc-provider.
  const demoIdp = demoMode && !auth.oidc ? await loadDemoIdp() : null;
  return createStaffWeb({
    store,
    tokens: parts.tokens,
    log: parts.log,
    // The terminal when serve gives one; otherwise the provider's troubles go to the log.
    ...(opts.say ? { say: opts.say } : {}),
    publicUrl: config.publicUrl,
    schools: config.schools,
    config,
    adminToken: opts.adminToken ?? null,
    oidc: auth.oidc ?? null,
    // The demo signs staff in through its own in-process identity provider (demo mode only).
    demo: demoIdp ? { people: () => demoPeople(store, config.schools[0]!.id), createIdp: demoIdp } : null,
    sessionIdleHours: auth.sessionIdleHours,
    sessionMaxHours: auth.sessionMaxHours,
    sensitiveRoles: auth.sensitiveRoles,
    auditRetentionDays: auth.auditRetentionDays,
    helpContact: auth.helpContact ?? null,
    templatesDir: config.rosterTemplatesDir ?? null,
    onLiveRotated: parts.onLiveRotated,
    search: parts.search,
    now: parts.now,
  });
}

function readiness(
  store: Pick<Store, 'runs' | 'readOnly'>,
  config: Config,
  sync: { scheduler: SchedulerHandle },
  trouble: StoreTrouble,
  now: () => Date,
): NonNullable<Parameters<typeof createApp>[0]['readiness']> {
  return {
    now,
    // Three incremental intervals unless READY_MAX_PULL_AGE_MINUTES says otherwise, and never less than the
    // longest the pace holds pulls back after 429s plus a few minutes: an every-minute schedule that an
    // upstream slowed down (or one long full pull) is not a replica to take out of service.
    maxPullAgeMs: (schoolId) => {
      if (config.readyMaxPullAgeMinutes) return config.readyMaxPullAgeMinutes * 60_000;
      const interval = sync.scheduler.incrementalIntervalMs(schoolId);
      return interval === null ? null : Math.max(3 * interval, MAX_PACE_DEFERRAL_MS + 5 * 60_000);
    },
    // A real write: this process's heartbeat (what every run of it needs to be written anyway). A store
    // opened read-only says why rather than SQLite's "attempt to write a readonly database".
    probeWrite: () =>
      store.readOnly
        ? Promise.reject(
            new Error(
              `${store.readOnly} (opened read-only at start; start serve again once it can be written)`,
            ),
          )
        : store.runs.beat(processOwner(), new Date().toISOString()),
    schedulerProblems: () => sync.scheduler.problems(),
    storeTrouble: trouble,
  };
}

/** One working feed URL per scope kind of the first school (for the demo banner). */
async function sampleFeeds(
  store: Store,
  config: Config,
  feeds: FeedService,
  trust: { tokens: FeedTokens; guard: RotationGuard },
): Promise<SampleFeed[]> {
  const school = config.schools[0];
  if (!school) return [];
  const base = config.publicUrl.replace(/\/+$/, '');
  const defs = await listFeedDefs(store, school.id);
  const out: SampleFeed[] = [];
  for (const scope of ['team', 'student', 'staff', 'activity'] as const) {
    // The first few subjects of the scope: show one whose calendar has something in it.
    for (const def of defs.filter((d) => d.scope === scope).slice(0, 25)) {
      const rendered = await feeds.get(school.id, scope, def.scopeId);
      if (!rendered?.eventCount) continue;
      // None while no rotation record vouches for the feed secret.
      if (trust.guard.reason(school.id) !== null) return out;
      const issued = await trust.tokens.ensure(school.id, scope, def.scopeId);
      if (issued.token)
        out.push({
          schoolId: school.id,
          scope,
          name: def.calendarName,
          url: `${base}/feeds/${issued.token}`,
        });
      break;
    }
  }
  return out;
}

async function demoPeople(store: Pick<Store, 'records'>, schoolId: string): Promise<DemoPerson[]> {
  const [staff, teams] = await Promise.all([
    store.records.list(schoolId, 'staff'),
    store.records.list(schoolId, 'teams'),
  ]);
  return pickDemoStaff(staff, teams);
}

/**
 * The demo's sign-in (identity/demo-idp.ts) runs oidc-provider, an optional dependency: `npm install` brings it,
 * production installs (`npm ci --omit=optional`, the Docker image's default target) leave it out. Without it, the
 * demo stops at start-up saying what to do, instead of Node's bare "Cannot find package".
 */
async function loadDemoIdp() {
  try {
    return (await import('./identity/demo-idp.ts')).createDemoIdp;
  } catch (err) {
    const missing =
      (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      String((err as Error).message).includes("'oidc-provider'");
    if (!missing) throw err;
    throw new Error(
      'the demo signs staff in through its own OpenID provider, the package oidc-provider, which is not installed ' +
        '(an optional dependency that production installs leave out). In a clone of rostercal, run `npm install` ' +
        '(or `npm install --no-save oidc-provider` if optional packages are omitted), then `npm start` again. ' +
        'With Docker, build the demo image: `docker build --target demo -t rostercal-demo .` then ' +
        '`docker run -p 8080:8080 rostercal-demo`. A school with its own identity provider (OIDC_ISSUER…) does ' +
        'not need it.',
      { cause: err },
    );
  }
}
