// /healthz: the process answers. /readyz: the store answers and no school's sync has been failing for longer
// than allowed (feeds would be going stale). /metrics: Prometheus text.
import { Router } from 'express';
import type { Store, SyncRun } from '../store/types.ts';
import type { Metrics } from './metrics.ts';

export interface ReadinessOptions {
  /** Not ready once a school's pulls have failed continuously for this long. Default 6 hours. */
  maxSyncFailureMs?: number;
  now?: () => Date;
}

/** Why a school's sync makes the instance unready, or null. Pull runs only; push failures do not count. */
export function syncProblem(runs: SyncRun[], now: Date, maxFailureMs: number): string | null {
  const pulls = runs
    .filter((r) => r.kind !== 'push' && r.status !== 'running')
    .sort((a, b) => b.startedAt.localeCompare(a.startedAt));
  let failingSince: string | null = null;
  for (const r of pulls) {
    if (r.status !== 'failed') break;
    failingSince = r.startedAt;
  }
  if (!failingSince) return null;
  const ms = now.getTime() - Date.parse(failingSince);
  return ms > maxFailureMs ? `sync failing since ${failingSince}` : null;
}

export function healthRoutes(
  opts: {
    store: Store;
    metrics: Metrics;
    /** Schools whose feeds are not served because their current URLs cannot be told (rotations.ts). */
    feedProblems?: () => Promise<ReadonlyMap<string, string>>;
  } & ReadinessOptions,
): Router {
  const router = Router();
  const maxFailureMs = opts.maxSyncFailureMs ?? 6 * 3_600_000;
  const now = opts.now ?? (() => new Date());

  router.get('/healthz', (_req, res) => {
    res.locals.route = '/healthz';
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res) => {
    res.locals.route = '/readyz';
    res.setHeader('Cache-Control', 'no-store');
    const problems: Record<string, string> = {};
    let feeds: Record<string, string> = {};
    try {
      feeds = Object.fromEntries((await opts.feedProblems?.()) ?? []);
      await opts.store.ping();
      for (const school of await opts.store.listSchools()) {
        const problem = syncProblem(await opts.store.listRuns(school.id, { limit: 50 }), now(), maxFailureMs);
        if (problem) problems[school.id] = problem;
      }
    } catch {
      // The store's error text may carry connection details: say only what failed.
      res.status(503).json({ status: 'unavailable', store: 'unreachable' });
      return;
    }
    const ok = Object.keys(problems).length === 0 && Object.keys(feeds).length === 0;
    res.status(ok ? 200 : 503).json(
      ok
        ? { status: 'ready' }
        : {
            status: 'degraded',
            ...(Object.keys(problems).length ? { sync: problems } : {}),
            ...(Object.keys(feeds).length ? { feeds } : {}),
          },
    );
  });

  router.get('/metrics', async (_req, res) => {
    res.locals.route = '/metrics';
    res.setHeader('Content-Type', opts.metrics.registry.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(await opts.metrics.registry.metrics());
  });
  return router;
}
