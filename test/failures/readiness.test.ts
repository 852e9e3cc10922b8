// Health that tells the truth, and a serve that starts while the upstream is down. /readyz is 503 with the reason
// in its body until a pull has succeeded, once the last success is older than allowed, and while the store cannot
// be written; a scheduled fire the store made fail is logged through our logger (not node-cron's console line)
// and shown by /readyz. Each through the real `rostercal serve` as a child process.
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv, stopped, writeServeConfig } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { downUpstream, freePort } from '../support/ports.ts';
import { untilValue } from '../support/until.ts';

async function readyz(base: string): Promise<{ status: number; body: string }> {
  const res = await fetch(`${base}/readyz`);
  return { status: res.status, body: await res.text() };
}

describe('readiness and an unreachable upstream (rostercal serve)', () => {
  let sandbox: Sandbox;
  let dir: string;
  let down: Awaited<ReturnType<typeof downUpstream>>;
  let downUrl: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-ready-'));
    // An upstream that drops every connection, on a port held for the whole file.
    down = await downUpstream();
    downUrl = down.url;
  });
  afterAll(async () => {
    await down?.close();
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('never pulled, upstream down: the banner, one line saying why, and /readyz 503 naming it', async () => {
    const port = await freePort();
    const env = {
      ...schoolEnv({ url: downUrl, token: sandbox.token }, { DATA_DIR: path.join(dir, 'empty') }),
      PORT: String(port),
    };
    const serve = rostercal(['serve'], env);
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 40_000);
      expect(serve.output()).toMatch(/rostercal is serving 1 school/);
      const why = serve
        .output()
        .match(/rostercal: hillcrest: last pull failed .*serving what the store has/g);
      expect(why, serve.output()).toHaveLength(1);
      expect(why![0]).toMatch(/127\.0\.0\.1/);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const ready = await readyz(`http://127.0.0.1:${port}`);
      expect(ready.status).toBe(503);
      expect(ready.body).toMatch(/"hillcrest":"no pull has succeeded yet; last pull failed: .*127\.0\.0\.1/);
    } finally {
      await stopped(serve);
    }
  });

  it('pulled before, upstream down: feeds answer from the store; /readyz 503 once the last success is too old', async () => {
    const data = path.join(dir, 'pulled');
    const synced = rostercal(['sync', '--full'], schoolEnv(sandbox, { DATA_DIR: data }));
    expect(await synced.exit, synced.output()).toBe(0);
    const list = rostercal(['feeds', 'list', '--json'], schoolEnv(sandbox, { DATA_DIR: data }));
    expect(await list.exit, list.output()).toBe(0);
    const feed = (JSON.parse(list.stdout()) as { scope: string; url: string }[]).find(
      (f) => f.scope === 'team',
    )!;

    for (const [maxAge, expected] of [
      [undefined, 200],
      ['0.01', 503],
    ] as const) {
      const port = await freePort();
      const env = {
        ...schoolEnv({ url: downUrl, token: sandbox.token }, { DATA_DIR: data }),
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        ...(maxAge ? { READY_MAX_PULL_AGE_MINUTES: maxAge } : {}),
      };
      const serve = rostercal(['serve'], env);
      try {
        await serve.waitFor(/Stop with Ctrl-C/, 40_000);
        const ics = await fetch(`http://127.0.0.1:${port}${new URL(feed.url).pathname}`);
        expect(ics.status, serve.output()).toBe(200);
        expect(await ics.text()).toMatch(/BEGIN:VEVENT/);
        const ready = await readyz(`http://127.0.0.1:${port}`);
        expect(ready.status, ready.body).toBe(expected);
        if (expected === 503)
          expect(ready.body).toMatch(/last successful pull finished .* min ago \(allowed: 0 min\)/);
      } finally {
        await stopped(serve);
      }
    }
  }, 180_000); // four CLI children: a deadline, not a measure (49 s at load 17)
});

describe('a corrupt SQLite file under a running serve', () => {
  let sandbox: Sandbox;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-corrupt-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("/readyz 503 names SQLite's own words", async () => {
    const env = schoolEnv(sandbox, { DATA_DIR: dir });
    const synced = rostercal(['sync', '--full'], env);
    expect(await synced.exit, synced.output()).toBe(0);
    const port = await freePort();
    const serve = rostercal(['serve'], { ...env, PORT: String(port) });
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 40_000);
      const base = `http://127.0.0.1:${port}`;
      expect((await readyz(base)).status).toBe(200);
      // Everything after the first page (the header and schema stay readable) becomes junk.
      const file = path.join(dir, 'rostercal.sqlite');
      const { size } = await stat(file);
      const fh = await open(file, 'r+');
      await fh.write(Buffer.alloc(size - 4096, 0x5a), 0, size - 4096, 4096);
      await fh.close();
      const ready = await readyz(base);
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.body)).toEqual({
        status: 'unavailable',
        // The read that met the damage names it as the integrity check would, in SQLite's own words.
        store: 'damaged: a read failed: database disk image is malformed',
      });
    } finally {
      await stopped(serve);
    }
  });
});

describe('a store that cannot be written (rostercal serve on PostgreSQL made read-only)', () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    db = await createTestDatabase();
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-ro-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('/readyz 503 names the write error; a scheduled fire it skips is logged as ours, not by node-cron', async () => {
    const port = await freePort();
    // Pulls every 3 seconds, so a fire comes while the store is read-only.
    const config = writeServeConfig(path.join(dir, 'rostercal.json'), {
      upstream: sandbox,
      port,
      dataDir: dir,
      incremental: '*/3 * * * * *',
    });
    const serve = rostercal(['serve'], { ROSTERCAL_CONFIG: config, DATABASE_URL: db.url });
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 60_000);
      const base = `http://127.0.0.1:${port}`;
      expect((await readyz(base)).status).toBe(200);

      // Read-only from the next session on; the service's sessions are ended so its pool opens new ones.
      const name = new URL(db.url).pathname.slice(1);
      await admin.query(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      // A request or a pull in flight may meet a session just ended ("cannot be read: …" or "cannot be written:
      // terminating connection …"): also true, but not what this test is about, so /readyz is asked until it names
      // the refused write (a deadline, not a measure); the next fire, 3 s on, meets it.
      const ready = await untilValue('/readyz naming the refused write', async () => {
        const r = await readyz(base);
        return /cannot be written: cannot execute/.test(r.body) ? r : undefined;
      });
      expect(ready.status, ready.body).toBe(503);
      // The store's line lists its problems joined by '; ': beside the refusal it may name the write the ended
      // session broke first ('cannot be written: terminating connection …', seen in CI).
      const problems = String((JSON.parse(ready.body) as { store?: string }).store).split('; ');
      expect(problems, ready.body).toContainEqual(
        expect.stringMatching(/^cannot be written: cannot execute \w+ in a read-only transaction$/),
      );

      await serve.waitFor(/fire skipped: the store failed/);
      expect(serve.output()).not.toMatch(/Run coordinator failed/);
      expect((await readyz(base)).body).toMatch(/scheduled incremental fire of .* skipped: the store failed/);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- serve said:\n${serve.output()}`);
    } finally {
      await admin.query(
        `ALTER DATABASE ${new URL(db.url).pathname.slice(1)} RESET default_transaction_read_only`,
      );
      await admin.end();
      await stopped(serve);
    }
  });
});
