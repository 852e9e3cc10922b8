// The running service behind `rostercal serve` (and `npm start`): store, upstream clients (the in-process sandbox
// for demo schools), the first pull, the scheduler, pre-rendered feeds and the web server, wired together once.
// Each part stays ignorant of the others; this file is the only place that knows them all.
import express from 'express';
import type { Config, SchoolConfig } from './config.ts';
import { feedsAfterPull } from './feeds/after-pull.ts';
import { FeedService } from './feeds/service.ts';
import { FeedTokens, loadFeedSecret } from './feeds/tokens.ts';
import { type Logger, silentLogger } from './log.ts';
import { openStore } from './store/index.ts';
import type { FeedScope, Store } from './store/types.ts';
import { afterPullSteps } from './sync/after-pull.ts';
import type { PullSummary } from './sync/pull.ts';
import { pullSchool } from './sync/pull.ts';
import { type SchedulerHandle, startScheduler } from './sync/scheduler.ts';
import { clientForSchool, startDemoUpstream } from './sync/upstream.ts';
import type { UpstreamClient } from './upstream/api.ts';
import { createAdminRouter } from './web/admin.ts';
import { createAdminAuth } from './web/admin-auth.ts';
import { createApp } from './web/app.ts';
import { createMetrics, type Metrics } from './web/metrics.ts';
import { createRostersRouter } from './web/rosters.ts';
import { type RunningServer, startServer } from './web/server.ts';

export interface ServiceOptions {
  config: Config;
  log?: Logger;
  /** Overrides config.port (0 = any free port; tests). */
  port?: number;
  host?: string;
  /** Run the cron schedule (default true). */
  schedule?: boolean;
  /** Pull each school once at start when it has never been pulled (default true). */
  initialPull?: boolean;
  /** Staff access to rosters and the admin pages (ADMIN_TOKEN); without one, those routes admit nobody. */
  adminToken?: string | null;
  /** Called for each line worth showing a person at the terminal (the demo's progress). */
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
  /** Where the demo sandbox listens, when a demo school is configured. */
  sandboxUrl: string | null;
  config: Config;
  store: Store;
  feeds: FeedService;
  metrics: Metrics;
  scheduler: SchedulerHandle | null;
  /** One working feed URL per scope kind of the first school (for the demo banner). */
  sampleFeeds(): Promise<SampleFeed[]>;
  close(): Promise<void>;
}

export async function startService(opts: ServiceOptions): Promise<RunningService> {
  const log = opts.log ?? silentLogger;
  const say = opts.say ?? (() => {});
  const demo = await startDemoUpstream(opts.config);
  const config = demo.config;
  if (demo.url) say(`demo sandbox school served at ${demo.url}`);

  const store = await openStore({
    ...(config.databaseUrl ? { databaseUrl: config.databaseUrl } : {}),
    dataDir: config.dataDir,
  });
  const cleanup: (() => Promise<void>)[] = [() => demo.close(), () => store.close()];
  try {
    for (const s of config.schools)
      await store.upsertSchool({ id: s.id, name: s.name, timeZone: s.timeZone });

    const metrics = createMetrics();
    const feeds = new FeedService({ store, onRender: (info) => metrics.observeFeedRender(info) });
    const clients = new Map<string, UpstreamClient>();
    const clientFor = (school: SchoolConfig) => {
      const known = clients.get(school.id);
      if (known) return known;
      const created = clientForSchool(school, log);
      clients.set(school.id, created);
      return created;
    };
    // After every pull: metrics and feed re-rendering (so a request costs a lookup), then whatever other
    // modules registered (pushing).
    const steps = [feedsAfterPull({ feeds, metrics }), ...afterPullSteps()];
    const afterPull = async (school: SchoolConfig, summary: PullSummary) => {
      for (const step of steps) {
        await step.run({ store, school, summary, log, flags: {}, print: (line) => log.info(line) });
      }
    };

    if (opts.initialPull ?? true) {
      for (const school of config.schools) {
        const runs = await store.listRuns(school.id, { limit: 20 });
        if (runs.some((r) => r.kind !== 'push' && r.status !== 'failed' && r.status !== 'running')) continue;
        say(`${school.id}: first pull from upstream…`);
        const summary = await pullSchool({ store, client: clientFor(school), school, kind: 'full', log });
        await afterPull(school, summary);
        const total = Object.values(summary.counts).reduce((n, c) => n + c.added + c.changed, 0);
        say(
          `${school.id}: pull ${summary.status} in ${(summary.durationMs / 1000).toFixed(1)} s ` +
            `(${total} records, ${summary.upstream.requests} upstream requests)`,
        );
      }
    }

    const scheduler =
      (opts.schedule ?? true)
        ? await startScheduler({ store, config, clientFor, log, onPull: afterPull })
        : null;
    if (scheduler) cleanup.unshift(() => scheduler.stop());

    const tokens = new FeedTokens(store, loadFeedSecret({ dataDir: config.dataDir }));
    // One staff sign-in for rosters and the dashboard: its login routes are mounted once, with the dashboard.
    const auth = createAdminAuth({ adminToken: opts.adminToken });
    const app = createApp({
      store,
      feeds,
      metrics,
      publicUrl: config.publicUrl,
      logger: log,
      routers: {
        '/': express.Router().use(
          auth.router,
          createAdminRouter({ store, config, auth, tokens }),
          createRostersRouter({
            store,
            config,
            auth,
            onError: (err) => log.error({ err }, 'roster failed'),
          }),
        ),
      },
    });
    const server: RunningServer = await startServer(app, {
      port: opts.port ?? config.port,
      ...(opts.host ? { host: opts.host } : {}),
    });
    cleanup.unshift(() => server.close());

    const base = config.publicUrl.replace(/\/+$/, '');
    return {
      url: server.url,
      sandboxUrl: demo.url,
      config,
      store,
      feeds,
      metrics,
      scheduler,
      async sampleFeeds() {
        const school = config.schools[0];
        if (!school) return [];
        const { listFeedDefs } = await import('./feeds/catalog.ts');
        const defs = await listFeedDefs(store, school.id);
        const out: SampleFeed[] = [];
        for (const scope of ['team', 'student', 'staff', 'activity'] as const) {
          // The first few subjects of the scope: show one whose calendar has something in it.
          for (const def of defs.filter((d) => d.scope === scope).slice(0, 25)) {
            const rendered = await feeds.get(school.id, scope, def.scopeId);
            if (!rendered?.eventCount) continue;
            const issued = await tokens.ensure(school.id, scope, def.scopeId);
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
      },
      async close() {
        for (const step of cleanup) await step().catch((err) => log.error({ err }, 'shutdown step failed'));
      },
    };
  } catch (err) {
    for (const step of cleanup) await step().catch(() => {});
    throw err;
  }
}
