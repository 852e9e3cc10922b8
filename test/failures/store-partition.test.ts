// A partition that drops packets (the most common real one): `rostercal serve` reaches PostgreSQL through a relay
// that holds every packet, connections left open, so no read of the store is ever answered or refused. What was
// rendered is still served from memory, the rest is 503 with Retry-After, and /readyz names the store, each within
// ANSWER_BOUND_MS. Before the store's reads had a deadline, every request of the replica waited as long as the hold
// lasted (on a real network until the kernel gave up on the connection, ~15 min on Linux).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';
import { freePort } from '../support/ports.ts';
import { until } from '../support/until.ts';

const FEED_SECRET = 'partition-feed-secret-0123456789abcdefghijk';
const PUBLIC = 'https://calendars.hillcrest.example';
/** Every answer while held: the store's read deadline (4 s), or its connect timeout (5 s), and a margin. */
const ANSWER_BOUND_MS = 6000;
/** How long the partition lasts before the answers are checked again (past the deadline's memo). */
const HOLD_MS = 12_000;

let sandbox: Sandbox;
let db: TestDatabase;
let relay: PgWire;
let dir: string;
let port: number;
let replica: Child;

const local = (url: string) => `http://127.0.0.1:${port}${url.startsWith('/') ? url : new URL(url).pathname}`;

interface Answer {
  status: number;
  ms: number;
  etag: string | null;
  retryAfter: string | null;
  body: string;
}

/** The answer and how long it took; status 0 when none came within 30 s. */
async function ask(url: string): Promise<Answer> {
  const t0 = performance.now();
  try {
    const res = await fetch(local(url), { signal: AbortSignal.timeout(30_000) });
    const body = await res.text();
    return {
      status: res.status,
      ms: performance.now() - t0,
      etag: res.headers.get('etag'),
      retryAfter: res.headers.get('retry-after'),
      body,
    };
  } catch (err) {
    if ((err as Error).name !== 'TimeoutError') throw err;
    return { status: 0, ms: performance.now() - t0, etag: null, retryAfter: null, body: '' };
  }
}

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 37, scale: 'small' });
  db = await createTestDatabase();
  relay = await startPgWire(db.url);
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-partition-'));
  port = await freePort();
  const env = {
    ...schoolEnv(sandbox, { DATABASE_URL: relay.url, DATA_DIR: dir }),
    PUBLIC_URL: PUBLIC,
    PORT: String(port),
    FEED_SECRET,
    LOG_LEVEL: 'warn',
  };
  const accepted = await runRostercal(['feeds', 'accept-store'], env);
  expect(accepted.code, accepted.stderr).toBe(0);
  replica = rostercal(['serve'], env);
  await replica.waitFor(/Stop with Ctrl-C/, 120_000);
}, 300_000);

afterAll(async () => {
  relay?.restore();
  if (replica && replica.proc.exitCode === null) replica.proc.kill('SIGTERM');
  await replica?.exit;
  await relay?.close();
  await db?.drop();
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('serve while the network to PostgreSQL drops packets', () => {
  it('answers from memory what it rendered, 503 with Retry-After the rest, /readyz naming the store, each within the bound', async () => {
    const env = {
      ...schoolEnv(sandbox, { DATABASE_URL: relay.url, DATA_DIR: dir }),
      PUBLIC_URL: PUBLIC,
      FEED_SECRET,
    };
    const list = await runRostercal(['feeds', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    const teams = (JSON.parse(list.stdout) as FeedListing[]).filter((r) => r.scope === 'team');
    const warm = teams[0]!;
    const cold = [teams[teams.length - 1]!, teams[teams.length - 2]!];
    const before = await ask(warm.url!);
    expect(before.status, before.body).toBe(200);
    expect((await ask('/readyz')).status).toBe(200);
    // Past the replica's one-second memory of the rotation mark and data version: the next request reads them.
    await new Promise((r) => setTimeout(r, 1500));

    relay.hold();
    const heldAt = performance.now();
    const rounds: Record<string, Answer>[] = [];
    try {
      for (const n of [0, 1]) {
        if (n === 1)
          await new Promise((r) => setTimeout(r, Math.max(0, HOLD_MS - (performance.now() - heldAt))));
        const [w, c, ready] = await Promise.all([ask(warm.url!), ask(cold[n]!.url!), ask('/readyz')]);
        rounds.push({ warm: w!, cold: c!, ready: ready! });
      }
    } finally {
      relay.restore();
    }
    console.log(
      rounds
        .map(
          (r, n) =>
            `held, round ${n}: ${Object.entries(r)
              .map(([k, a]) => `${k} ${a.status} in ${a.ms.toFixed(0)} ms`)
              .join(', ')}`,
        )
        .join('\n'),
    );
    for (const r of rounds) {
      expect.soft(r.warm!.status).toBe(200);
      expect.soft(r.warm!.etag).toBe(before.etag);
      expect.soft(r.warm!.body).toBe(before.body);
      expect.soft(r.cold!.status, r.cold!.body.slice(0, 200)).toBe(503);
      expect.soft(Number(r.cold!.retryAfter)).toBeGreaterThan(0);
      expect.soft(r.ready!.status).toBe(503);
      expect.soft(r.ready!.body).toMatch(/"store":"cannot be reached/);
      for (const a of Object.values(r)) expect.soft(a.ms).toBeLessThan(ANSWER_BOUND_MS);
    }
    // Healed: ready again before anything is asked (a render that could not be stored while the store could not
    // be reached kept /readyz 503 until one was stored again, however long), then the cold feeds too. Within 30 s:
    // connections held through the partition come back at TCP's retransmission pace (2-5.5 s alone, over 10 s in
    // a clean-clone CI run).
    let last: Answer | undefined;
    const healed = performance.now();
    try {
      await until(
        'ready again',
        async () => {
          last = await ask('/readyz');
          return last.status === 200;
        },
        30_000,
        200,
      );
    } finally {
      console.log(
        `healed: /readyz ${last?.status} after ${(performance.now() - healed).toFixed(0)} ms ${last?.body}`,
      );
    }
    for (const f of cold)
      await until(`${f.scope} ${f.id} served once healed`, async () => (await ask(f.url!)).status === 200);
  }, 120_000);
});
