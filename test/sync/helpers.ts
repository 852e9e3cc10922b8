// Shared parts of the pull tests: a real sandbox over HTTP, a real store (SQLite file or PostgreSQL database),
// a school configuration, and snapshots of what the store holds.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseSchool, type SchoolConfig } from '../../src/config.ts';
import type { Id } from '../../src/domain/types.ts';
import type { PullSummary } from '../../src/jobs/pull-summary.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { ResourceKind, Store } from '../../src/store/types.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { type SchedulerHandle, type SchedulerOptions, startScheduler } from '../../src/sync/scheduler.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { createTestDatabase } from '../support/pg.ts';

export type Dialect = 'sqlite' | 'postgres';
export const DIALECTS: Dialect[] = ['sqlite', 'postgres'];

export interface TestStore {
  store: Store;
  /** How to open the same database again (another process, a second handle). */
  env: { DATABASE_URL?: string; DATA_DIR?: string };
  reopen(): Promise<Store>;
  cleanup(): Promise<void>;
}

/** `checkpointsOffThread`: SQLite opened as `serve` opens it (see OpenStoreOptions). */
export async function openTestStore(
  dialect: Dialect,
  opts: { checkpointsOffThread?: boolean } = {},
): Promise<TestStore> {
  if (dialect === 'postgres') {
    const db = await createTestDatabase();
    const open = () => openStore({ databaseUrl: db.url, poolSize: 4 });
    const store = await open();
    return {
      store,
      env: { DATABASE_URL: db.url },
      reopen: open,
      cleanup: async () => {
        await store.close().catch(() => {});
        await db.drop();
      },
    };
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'rostercal-sync-'));
  const open = () => openStore({ dataDir: dir, ...opts });
  const store = await open();
  return {
    store,
    env: { DATA_DIR: dir },
    reopen: open,
    cleanup: async () => {
      await store.close().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function testSchool(
  sandbox: Pick<Sandbox, 'url' | 'token'>,
  patch: Record<string, unknown> = {},
): SchoolConfig {
  return parseSchool({
    id: 'hillcrest',
    name: 'Hillcrest College',
    upstream: { url: sandbox.url, token: sandbox.token },
    timeZone: 'Australia/Sydney',
    ...patch,
  });
}

/** A full pull of the sandbox's school (testSchool) into `store` on the clock `now`; throws unless it succeeded. */
export async function fullPull(
  store: Store,
  sandbox: Pick<Sandbox, 'url' | 'token'>,
  now: string,
): Promise<PullSummary> {
  const summary = await pullSchool({
    store,
    client: testClient(sandbox),
    school: testSchool(sandbox),
    kind: 'full',
    now: () => new Date(now),
  });
  if (summary.status !== 'succeeded')
    throw new Error(`the full pull ${summary.status}: ${summary.errors.join('; ')}`);
  return summary;
}

/** Fast pacing and short backoff: the sandbox is local, and chaos tests must not wait for minutes. */
export function testClient(
  sandbox: Pick<Sandbox, 'url' | 'token'>,
  opts: { maxRetries?: number; baseMs?: number } = {},
): UpstreamClient {
  return createUpstreamClient({
    baseUrl: sandbox.url,
    token: sandbox.token,
    rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
    backoff: { baseMs: opts.baseMs ?? 10, capMs: 200, maxRetries: opts.maxRetries ?? 12 },
  });
}

/** Edits an absence upstream (its reason gets `note`), as the school's staff would: incremental listings bring it. */
export async function editAbsence(sandbox: Sandbox, id: Id, note: string): Promise<void> {
  const model = sandbox.school.absences.find((a) => a.id === id)!;
  await testClient(sandbox).updateAbsences([
    {
      id,
      studentId: model.studentId,
      startDate: new Date(model.start).toISOString(),
      endDate: new Date(model.end).toISOString(),
      explained: model.explained,
      reason: `${model.reason} (${note})`,
    },
  ]);
}

export const SNAPSHOT_KINDS: ResourceKind[] = [
  'sessions',
  'teams',
  'students',
  'staff',
  'absences',
  'activities',
  'locations',
  'yearGroups',
  'departments',
  'studentTeams',
  'customFields',
];

/** The live records of every kind, without the store's bookkeeping, sorted by id: comparable across stores. */
export async function snapshot(store: Store, schoolId: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const kind of SNAPSHOT_KINDS) {
    const rows = await store.records.list(schoolId, kind);
    out[kind] = rows
      .map(({ meta: _meta, ...rest }) => rest as Record<string, unknown>)
      .sort((a, b) => String(a.id ?? a.key).localeCompare(String(b.id ?? b.key), 'en', { numeric: true }));
  }
  return out;
}

export interface SandboxRouteStats {
  total: number;
  routes: Record<string, { total: number; byStatus: Record<string, number> }>;
}

/** The sandbox's own request counter, read over HTTP like any client would. */
export async function sandboxStats(url: string): Promise<SandboxRouteStats> {
  const res = await fetch(`${url}/_sandbox/stats`);
  if (!res.ok) throw new Error(`GET /_sandbox/stats: ${res.status}`);
  return (await res.json()) as SandboxRouteStats;
}

export async function resetSandboxStats(url: string): Promise<void> {
  const res = await fetch(`${url}/_sandbox/stats/reset`, { method: 'POST' });
  if (!res.ok) throw new Error(`POST /_sandbox/stats/reset: ${res.status}`);
}

/** Every record of a listing, read straight from the client: the reference the store is compared with. */
export async function listAll<T>(pages: AsyncIterable<{ records: T[] }>): Promise<T[]> {
  const out: T[] = [];
  for await (const p of pages) out.push(...p.records);
  return out;
}

/**
 * The real scheduler over one school whose schedules never come round during a test (1 January): the test fires
 * them (`fire`, at the times cron would give them), on the sandbox's clock.
 */
export function drivenScheduler(
  sandbox: Sandbox,
  ts: TestStore,
  opts: Pick<SchedulerOptions, 'clientFor' | 'onPull'>,
): Promise<SchedulerHandle> {
  const school = testSchool(sandbox, { schedules: { incremental: '0 3 1 1 *', full: '0 3 1 1 *' } });
  return startScheduler({
    store: ts.store,
    config: { schools: [school] },
    now: () => new Date(sandbox.now()),
    ...opts,
  });
}
