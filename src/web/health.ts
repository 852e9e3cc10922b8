// /healthz: the process answers (liveness). /readyz: 503 with each reason named in its body while the store is
// damaged, cannot be read or cannot be written (a probe write, and the writes serving saw refused), a school has
// never been pulled successfully, its last success is too old, its pulls have failed for too long (feeds would
// be going stale), or a school's feed URLs cannot be trusted. /readyz?stale-ok: the same reasons, but only
// those that stop this replica serving what it has make it 503 (a damaged or unreadable store, untrusted feed
// URLs); a replica that is merely stale, cannot write, or cannot reach its database (it serves from memory what it
// rendered) answers 200 `serving` and still names them: the Docker health check, which must not take out of
// service a replica that restarting would not mend. Anyone may ask,
// so no answer names a file path (the operator reads those in serve's log). /metrics: metrics-access.ts.
import { type Response, Router } from 'express';
import { storeErrorText, withoutPaths } from '../log-text.ts';
import type { Store, SyncRun } from '../store/types.ts';
import { isStoreUnreachable } from '../store/unreachable.ts';
import { sendJson } from './layouts.ts';
import type { StoreTrouble } from './store-trouble.ts';

export interface ReadinessOptions {
  /** Not ready once a school's pulls have failed continuously for this long. Default 6 hours. */
  maxSyncFailureMs?: number;
  /** Not ready once a school's last successful pull is older than this (null: no limit for that school). */
  maxPullAgeMs?: (schoolId: string) => number | null;
  /** A real write to the store; its failure makes the instance unready, naming the error. */
  probeWrite?: () => Promise<void>;
  /** Trouble no run records (a scheduled fire skipped because the store failed), by school. */
  schedulerProblems?: () => Record<string, string>;
  /** The store's integrity and the writes serving saw refused. */
  storeTrouble?: StoreTrouble;
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

/** JSON for anyone who asks: every text without the file paths it may quote (a store error names its file). */
function publicJson(res: Response, body: unknown): void {
  sendJson(
    res,
    JSON.stringify(body, (_key, v: unknown) => (typeof v === 'string' ? withoutPaths(v) : v)),
  );
}

export function healthRoutes(
  opts: {
    store: Pick<Store, 'records' | 'runs' | 'ping'>;
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

  router.get('/readyz', async (req, res) => {
    res.locals.route = '/readyz';
    res.setHeader('Cache-Control', 'no-store');
    const staleOk = req.query['stale-ok'] !== undefined;
    const problems: Record<string, string> = { ...(opts.schedulerProblems?.() ?? {}) };
    let feeds: Record<string, string> = {};
    // What stops this replica serving what it has, and what only makes it stale.
    const unservable: string[] = [];
    const stale: string[] = [];
    const damage = await opts.storeTrouble?.damage();
    if (damage) unservable.push(`damaged: ${damage}`);
    try {
      feeds = Object.fromEntries((await opts.feedProblems?.()) ?? []);
      await opts.store.ping();
      opts.storeTrouble?.reached();
      for (const school of await opts.store.records.listSchools()) {
        const runs = await opts.store.runs.listRuns(school.id, { limit: RUNS_LOOKED_AT });
        const problem =
          freshnessProblem(runs, now(), opts.maxPullAgeMs?.(school.id) ?? null) ??
          syncProblem(runs, now(), maxFailureMs);
        if (problem)
          problems[school.id] = problems[school.id] ? `${problems[school.id]}; ${problem}` : problem;
      }
    } catch (err) {
      // A read that meets damaged pages says so as the integrity check would, at once: the check may have passed
      // over pages this read needed, or not have run yet.
      opts.storeTrouble?.requestFailed(err);
      const found = damage ?? (await opts.storeTrouble?.damage()) ?? null;
      // Unreachable (a database stopped, restarting, cut off): this replica serves from memory what it rendered
      // and 503 with Retry-After the rest; a new replica would serve less (it could not even start), so the health
      // check (stale-ok) keeps it: 200 `serving`, naming the outage. Not ready for a load balancer's strict probe.
      if (!found && isStoreUnreachable(err)) {
        publicJson(res.status(staleOk ? 200 : 503), {
          status: staleOk ? 'serving' : 'unavailable',
          store: `cannot be reached: ${storeErrorText(err)}; serving from memory the feeds and pages this replica rendered, 503 for the rest`,
        });
        return;
      }
      publicJson(res.status(503), {
        status: 'unavailable',
        store: found ? `damaged: ${found}` : `cannot be read: ${storeErrorText(err)}`,
      });
      return;
    }
    try {
      await opts.probeWrite?.();
    } catch (err) {
      stale.push(`cannot be written: ${storeErrorText(err)}`);
    }
    stale.push(...(opts.storeTrouble?.writeProblems() ?? []));
    const storeProblems = [...unservable, ...stale];
    const store = storeProblems.length ? storeProblems.join('; ') : null;
    const hasSync = Object.keys(problems).length > 0;
    const hasFeeds = Object.keys(feeds).length > 0;
    if (!store && !hasSync && !hasFeeds) {
      res.json({ status: 'ready' });
      return;
    }
    const serving = staleOk && unservable.length === 0 && !hasFeeds;
    publicJson(res.status(serving ? 200 : 503), {
      status: serving ? 'serving' : store ? 'unavailable' : 'degraded',
      ...(store ? { store } : {}),
      ...(hasSync ? { sync: problems } : {}),
      ...(hasFeeds ? { feeds } : {}),
    });
  });

  return router;
}
