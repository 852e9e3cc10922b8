// Readiness that probes the store the way serving uses it (issue 27): a file damaged in the middle, where the
// few rows /readyz used to read do not live, is 503 at once with the reason, from a check of every page rather
// than from the age of the last successful pull. `/readyz?stale-ok` (the Docker health check) is 503 for that
// too, but stays 200 for a replica that is merely stale. Each through the real `rostercal serve`.
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv, stopped } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { downUpstream, freePort } from '../support/ports.ts';

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

/**
 * 20 blocks of 2 KB spread over the middle of the school's data: the leaf pages of its sessions, rosters, students
 * and teams, in file order. Not fractions of the file: which table a fixed offset lands on follows the data's size
 * and layout (the week school changes with the date), and a block on a table `serve` reads to start (its
 * installation, schools, feed tokens) stops it at start instead, which is another test's case.
 */
async function damage(file: string): Promise<void> {
  const db = new DatabaseSync(file, { readOnly: true });
  const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
  const pages = (
    db
      .prepare(
        `SELECT pageno FROM dbstat WHERE pagetype = 'leaf'
           AND name IN ('sessions', 'session_students', 'students', 'student_teams', 'teams')
         ORDER BY pageno`,
      )
      .all() as { pageno: number }[]
  ).map((r) => r.pageno);
  db.close();
  expect(pages.length).toBeGreaterThan(3);
  const picked = new Set(Array.from({ length: 20 }, (_, i) => pages[Math.floor((i * pages.length) / 20)]!));
  const fh = await open(file, 'r+');
  for (const page of picked) await fh.write(Buffer.alloc(2048, 0x5a), 0, 2048, (page - 1) * pageSize);
  await fh.close();
}

/**
 * 2 KB at the start of every fourth leaf page of one table (SQLite's dbstat tells where they are): damage that
 * the requests reading that table meet, and /readyz's own reads do not.
 */
async function damageTable(file: string, table: string): Promise<void> {
  const db = new DatabaseSync(file, { readOnly: true });
  const pageSize = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size;
  const pages = (
    db
      .prepare("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno")
      .all(table) as {
      pageno: number;
    }[]
  ).map((r) => r.pageno);
  db.close();
  expect(pages.length).toBeGreaterThan(3);
  const fh = await open(file, 'r+');
  for (const page of pages.filter((_, i) => i % 4 === 1))
    await fh.write(Buffer.alloc(2048, 0x5a), 0, 2048, (page - 1) * pageSize);
  await fh.close();
}

// Each test runs several CLI children (sync, feeds list, serve, status): its limit is a deadline of minutes (the
// 60 s default cut every one short at load 27), not a measure.
describe('a store damaged in the middle, under `rostercal serve`', () => {
  let sandbox: Sandbox;
  let dir: string;
  let down: Awaited<ReturnType<typeof downUpstream>>;
  let downUrl: string;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-damaged-'));
    down = await downUpstream();
    downUrl = down.url;
  });
  afterAll(async () => {
    await down?.close();
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('20 × 2 KB overwritten in the school’s data mid-file: /readyz and /readyz?stale-ok are 503 at once, naming the damage', async () => {
    const data = path.join(dir, 'damaged');
    const synced = rostercal(['sync', '--full'], schoolEnv(sandbox, { DATA_DIR: data }));
    expect(await synced.exit, synced.output()).toBe(0);
    await damage(path.join(data, 'rostercal.sqlite'));

    const port = await freePort();
    const serve = rostercal(['serve'], {
      ...schoolEnv(sandbox, { DATA_DIR: data }),
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 60_000);
      const base = `http://127.0.0.1:${port}`;
      expect((await get(`${base}/healthz`)).status).toBe(200);
      for (const probe of ['/readyz', '/readyz?stale-ok']) {
        const ready = await get(`${base}${probe}`);
        expect(ready.status, `${probe}: ${ready.body}`).toBe(503);
        expect(JSON.parse(ready.body).store, probe).toMatch(/^damaged: .*(page|malformed|btree)/i);
      }
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- serve said:\n${serve.output()}`);
    } finally {
      await stopped(serve);
    }
  }, 180_000);

  it('damaged while serving: the first request that meets it makes /readyz 503 at once', async () => {
    const data = path.join(dir, 'later');
    const env = schoolEnv(sandbox, { DATA_DIR: data });
    const synced = rostercal(['sync', '--full'], env);
    expect(await synced.exit, synced.output()).toBe(0);
    const list = rostercal(['feeds', 'list', '--json'], env);
    expect(await list.exit, list.output()).toBe(0);
    const paths = (JSON.parse(list.stdout()) as { url: string }[]).map((f) => new URL(f.url).pathname);
    const port = await freePort();
    const serve = rostercal(['serve'], {
      ...env,
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
    });
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 60_000);
      const base = `http://127.0.0.1:${port}`;
      expect((await get(`${base}/readyz`)).status).toBe(200);
      await damageTable(path.join(data, 'rostercal.sqlite'), 'sessions');
      const statuses = [];
      for (const p of paths) statuses.push((await get(`${base}${p}`)).status);
      // Feeds whose sessions live on damaged pages answer 500.
      expect(statuses.filter((s) => s === 500).length).toBeGreaterThan(0);
      const ready = await get(`${base}/readyz`);
      expect(ready.status, ready.body).toBe(503);
      expect(JSON.parse(ready.body).store, ready.body).toMatch(
        /^(damaged|cannot be read): .*(malformed|page|btree)/i,
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- serve said:\n${serve.output()}`);
    } finally {
      await stopped(serve);
    }
  }, 180_000);

  it('merely stale (upstream down, last success too old): /readyz 503, /readyz?stale-ok 200', async () => {
    const data = path.join(dir, 'stale');
    const synced = rostercal(['sync', '--full'], schoolEnv(sandbox, { DATA_DIR: data }));
    expect(await synced.exit, synced.output()).toBe(0);
    const port = await freePort();
    const serve = rostercal(['serve'], {
      ...schoolEnv({ url: downUrl, token: sandbox.token }, { DATA_DIR: data }),
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      READY_MAX_PULL_AGE_MINUTES: '0.01',
    });
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 60_000);
      const base = `http://127.0.0.1:${port}`;
      const ready = await get(`${base}/readyz`);
      expect(ready.status, ready.body).toBe(503);
      expect(ready.body).toMatch(/last successful pull finished/);
      const staleOk = await get(`${base}/readyz?stale-ok`);
      expect(staleOk.status, staleOk.body).toBe(200);
      // What it let pass is still said.
      expect(JSON.parse(staleOk.body)).toMatchObject({ status: 'serving' });
      expect(staleOk.body).toMatch(/last successful pull finished/);
    } finally {
      await stopped(serve);
    }
  }, 180_000);
});
