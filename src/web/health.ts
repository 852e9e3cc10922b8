// /healthz: the process answers. /readyz: 503 with the reason in its body while the store cannot be read or
// written, a school has never been pulled successfully, its last success is too old, or its pulls have failed
// for too long (feeds would be going stale). /metrics: Prometheus text.
import { Router } from 'express';
import { scrubSecrets } from '../log.ts';
import type { Store, SyncRun } from '../store/types.ts';
import type { Metrics } from './metrics.ts';

export interface ReadinessOptions {
  /** Not ready once a school's pulls have failed continuously for this long. Default 6 hours. */
  maxSyncFailureMs?: number;
  /** Not ready once a school's last successful pull is older than this (null: no limit for that school). */
  maxPullAgeMs?: (schoolId: string) => number | null;
  /** A real write to the store; its failure makes the instance unready, naming the error. */
  probeWrite?: () => Promise<void>;
  /** Trouble no run records (a scheduled fire skipped because the store failed), by school. */
  schedulerProblems?: () => Record<string, string>;
  now?: () => Date;
}

/** How many recent runs readiness looks at. */
const RUNS_LOOKED_AT = 50;

/** Why a school's pulls make the instance unready: none succeeded yet, or the last success is too old. */
export function freshnessProblem(runs: SyncRun[], now: Date, maxAgeMs: number | null): string | null {
  const pulls = runs.filter((r) => r.kind !== 'push');
  const success = pulls.find((r) => r.status === 'succeeded' || r.status === 'suspicious');
  if (!success) {
    const failed = pulls.find((r) => r.status === 'failed' || r.status === 'interrupted');
    const why = failed ? `; last pull ${failed.status}: ${failed.errors.at(-1) ?? 'no detail'}` : '';
    return runs.length >= RUNS_LOOKED_AT
      ? `no successful pull in the last ${RUNS_LOOKED_AT} runs${why}`
      : `no pull has succeeded yet${why}`;
  }
  if (maxAgeMs === null) return null;
  const at = success.finishedAt ?? success.startedAt;
  const age = now.getTime() - Date.parse(at);
  if (age <= maxAgeMs) return null;
  return `last successful pull finished ${at}, ${Math.round(age / 60_000)} min ago (allowed: ${Math.round(maxAgeMs / 60_000)} min)`;
}

/** A store error for an unauthenticated page: the driver's words (no connection string), shortened. */
function storeError(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return scrubSecrets(text.replace(/\w+:\/\/\S+/g, '<url>')).slice(0, 300);
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
    const problems: Record<string, string> = { ...(opts.schedulerProblems?.() ?? {}) };
    let feeds: Record<string, string> = {};
    try {
      feeds = Object.fromEntries((await opts.feedProblems?.()) ?? []);
      await opts.store.ping();
      for (const school of await opts.store.listSchools()) {
        const runs = await opts.store.listRuns(school.id, { limit: RUNS_LOOKED_AT });
        const problem =
          freshnessProblem(runs, now(), opts.maxPullAgeMs?.(school.id) ?? null) ??
          syncProblem(runs, now(), maxFailureMs);
        if (problem)
          problems[school.id] = problems[school.id] ? `${problems[school.id]}; ${problem}` : problem;
      }
    } catch (err) {
      res.status(503).json({ status: 'unavailable', store: `cannot be read: ${storeError(err)}` });
      return;
    }
    let store: string | null = null;
    try {
      await opts.probeWrite?.();
    } catch (err) {
      store = `cannot be written: ${storeError(err)}`;
    }
    const ok = Object.keys(problems).length === 0 && Object.keys(feeds).length === 0 && !store;
    res.status(ok ? 200 : 503).json(
      ok
        ? { status: 'ready' }
        : {
            status: store ? 'unavailable' : 'degraded',
            ...(store ? { store } : {}),
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
