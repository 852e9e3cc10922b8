// Test bench for the push engine: the sandbox as upstream, a real store filled by a real pull, and helpers to
// compare what the fakes hold with what the projection says each calendar should hold. The school is built around
// TEST_NOW and the product is handed the sandbox's clock (`bench.now`: pull, push windows, expected calendars).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import { loadProjectionContext, projectSession } from '../../src/calendar/index.ts';
import { type PushTargetConfig, parseTargets } from '../../src/config/push-targets.ts';
import { parseConfig, type SchoolConfig } from '../../src/config.ts';
import { candidateQuery } from '../../src/feeds/feed-scope.ts';
import { syncWindow } from '../../src/jobs/window.ts';
import { createLogger } from '../../src/log.ts';
import type { PushSummary } from '../../src/push/summary.ts';
import { pushSchool } from '../../src/push/triggers.ts';
import { type Sandbox, SCHOOL_TIME_ZONE, startSandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import type { FakeGoogle } from '../fakes/google-calendar.ts';
import { TEST_NOW } from '../support/clock.ts';

export interface Bench {
  sandbox: Sandbox;
  client: UpstreamClient;
  school: SchoolConfig;
  dir: string;
  store: Store;
  dbFile: string;
  /** The sandbox's clock, for the product: `pushTarget({ …, now: bench.now })`. */
  now: () => Date;
  /** Pull (full) from the sandbox into the store. */
  pull(): Promise<void>;
  /** Replaces the store with an empty one (a lost database) and pulls again. */
  loseDatabase(): Promise<void>;
  close(): Promise<void>;
}

export async function startBench(opts: { seed?: number; databaseUrl?: string } = {}): Promise<Bench> {
  const sandbox = await startSandbox({ seed: opts.seed ?? 7, scale: 'small', now: TEST_NOW });
  const now = () => new Date(sandbox.now());
  const client = createUpstreamClient({
    baseUrl: sandbox.url,
    token: sandbox.token,
    backoff: { baseMs: 10, capMs: 50 },
  });
  const school = parseConfig({
    schools: [
      {
        id: 'hill',
        name: 'Hill School',
        upstream: { url: sandbox.url, token: sandbox.token },
        timeZone: SCHOOL_TIME_ZONE,
      },
    ],
  }).schools[0]!;
  const dir = mkdtempSync(join(tmpdir(), 'rostercal-push-'));
  let n = 0;
  const open = async () => {
    const dbFile = join(dir, `db${n++}.sqlite`);
    return {
      dbFile,
      store: await openStore(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : { file: dbFile }),
    };
  };
  const first = await open();
  const bench: Bench = {
    sandbox,
    client,
    school,
    dir,
    store: first.store,
    dbFile: first.dbFile,
    now,
    async pull() {
      const s = await pullSchool({ store: bench.store, client, school, kind: 'full', now });
      if (s.status === 'failed') throw new Error(`pull failed: ${s.errors.join('; ')}`);
    },
    async loseDatabase() {
      await bench.store.close();
      if (opts.databaseUrl) throw new Error('loseDatabase is for SQLite benches');
      const next = await open();
      bench.store = next.store;
      bench.dbFile = next.dbFile;
      await bench.pull();
    },
    async close() {
      await bench.store.close().catch(() => {});
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await bench.pull();
  return bench;
}

/** The bench's school with one target, `teams`: a Google calendar per team on the fake, its writes unpaced. */
export function withTeamsOnGoogle(
  bench: Pick<Bench, 'school'>,
  fake: Pick<FakeGoogle, 'url' | 'token'>,
): SchoolConfig {
  const targets = parseTargets(
    [
      {
        id: 'teams',
        provider: 'google',
        scope: 'team',
        google: { rootUrl: fake.url, auth: { accessToken: fake.token }, writesPerSecond: 2000 },
      },
    ],
    'schools[0].targets',
  );
  return { ...bench.school, targets };
}

/** How many push runs of the bench's school the store holds (the last 100). */
export async function pushRuns(bench: Pick<Bench, 'store'>): Promise<number> {
  return (await bench.store.runs.listRuns('hill', { kind: 'push', limit: 100 })).length;
}

/**
 * A push of `school` through `bench.store`, and `waiting`, settled when the push says it waits for another
 * process's push of `target`: ordered by its own word, not by a sleep (on a loaded machine a fixed wait may end
 * before the push has even asked for its turn, and then proves nothing).
 */
export function pushThatWaits(
  bench: Pick<Bench, 'store' | 'now'>,
  school: SchoolConfig,
  target: string,
): { waiting: Promise<void>; pushing: Promise<PushSummary[]>; done(): boolean } {
  let waits!: () => void;
  const waiting = new Promise<void>((resolve) => {
    waits = resolve;
  });
  const log = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _enc, cb) {
        if (String(chunk).includes(`push of ${target} waits for another process`)) waits();
        cb();
      },
    }),
  });
  let done = false;
  const pushing = pushSchool({ store: bench.store, school, log, now: bench.now }).then((r) => {
    done = true;
    return r;
  });
  return { waiting, pushing, done: () => done };
}

/** What the projection says each calendar of the target holds: calendar key → sessionId → title. */
export async function expectedCalendars(
  bench: Pick<Bench, 'store' | 'now'>,
  schoolId: string,
  target: PushTargetConfig,
  ids: number[],
): Promise<Map<string, Map<number, string>>> {
  const { store } = bench;
  const ctx = await loadProjectionContext(store, schoolId);
  const w = syncWindow(bench.now(), target.window);
  const out = new Map<string, Map<number, string>>();
  for (const id of ids) {
    const sessions = await store.records.listSessions(
      schoolId,
      candidateQuery(target.scope, id, w.from, w.to),
    );
    const m = new Map<number, string>();
    for (const s of sessions) {
      const ev = projectSession(s, ctx, target.audience, { scope: target.scope, id });
      if (ev && !(ev.status === 'cancelled' && target.cancelled === 'remove')) m.set(s.id, ev.title);
    }
    out.set(`${target.scope}:${id}`, m);
  }
  return out;
}

/** Every calendar holds exactly one live event per expected session, with the projection's title, and nothing else. */
export function expectCalendarsEqual(
  actual: Map<string, { sessionId: number; title: string }[]>,
  expected: Map<string, Map<number, string>>,
): void {
  for (const [key, want] of expected) {
    const got = actual.get(key) ?? [];
    const ids = got.map((e) => e.sessionId).sort((a, b) => a - b);
    expect(new Set(ids).size, `${key}: duplicates`).toBe(ids.length);
    expect(ids, `${key}: sessions`).toEqual([...want.keys()].sort((a, b) => a - b));
    for (const e of got) expect(e.title, `${key}/${e.sessionId}`).toBe(want.get(e.sessionId));
  }
}
