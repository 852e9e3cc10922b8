// A store that can be read but not written (issue 27): DATA_DIR remounted read-only, or full before start.
// `serve` serves what the store has, with /readyz 503 naming why it cannot write (and /readyz?stale-ok 200);
// `status` and `feeds list` read it; nothing at start needs a write to succeed. Each through the real CLI, on a
// real tmpfs the test mounts (CI runs as root) and always unmounts.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv, stopped } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

// Each test runs several CLI children (sync, feeds list, serve, status): its limit is a deadline of minutes (the
// 60 s default cut every one short at load 27), not a measure.
describe('a store that can be read but not written', () => {
  let sandbox: Sandbox;
  let dir: string;
  const mounts: string[] = [];

  /** A fresh 48 MB tmpfs at dir/<name>, with a school pulled into it and its feeds listed. */
  async function pulledStore(
    name: string,
  ): Promise<{ data: string; env: Record<string, string>; urls: string[] }> {
    const data = path.join(dir, name);
    await mkdir(data);
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=48m,mode=0700', 'tmpfs', data], {
      encoding: 'utf8',
    });
    if (mount.status !== 0)
      throw new Error(
        `this test needs to mount a tmpfs (root, or CAP_SYS_ADMIN): mount said ${mount.error?.message ?? mount.stderr}`,
      );
    mounts.push(data);
    const env = schoolEnv(sandbox, { DATA_DIR: data });
    const synced = rostercal(['sync', '--full'], env);
    expect(await synced.exit, synced.output()).toBe(0);
    const list = rostercal(['feeds', 'list', '--json'], env);
    expect(await list.exit, list.output()).toBe(0);
    const urls = (JSON.parse(list.stdout()) as { url: string }[]).map((f) => f.url);
    return { data, env, urls };
  }

  async function serveChecks(env: Record<string, string>, urls: string[], why: RegExp): Promise<void> {
    const port = await freePort();
    const serve = rostercal(['serve'], { ...env, PORT: String(port) });
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 60_000);
      const base = `http://127.0.0.1:${port}`;
      for (const url of urls.slice(0, 20)) {
        const feed = await get(`${base}${new URL(url).pathname}`);
        expect(feed.status, feed.body).toBe(200);
        expect(feed.body).toMatch(/BEGIN:VCALENDAR/);
      }
      const ready = await get(`${base}/readyz`);
      expect(ready.status, ready.body).toBe(503);
      expect(JSON.parse(ready.body).store, ready.body).toMatch(why);
      const staleOk = await get(`${base}/readyz?stale-ok`);
      expect(staleOk.status, staleOk.body).toBe(200);
      // Anyone may ask /readyz: it says why without naming where the data lives (issue 44).
      for (const body of [ready.body, staleOk.body]) expect(body).not.toContain(dir);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- serve said:\n${serve.output()}`);
    } finally {
      await stopped(serve);
    }
  }

  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-readonly-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    for (const m of mounts) spawnSync('umount', ['-l', m]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('DATA_DIR mounted read-only: status and feeds list read it; serve serves it, /readyz 503 naming why', async () => {
    const { data, env, urls } = await pulledStore('readonly');
    execFileSync('mount', ['-o', 'remount,ro', data]);

    const status = rostercal(['status'], env);
    expect(await status.exit, status.output()).toBe(0);
    expect(status.output()).toMatch(/full\s+succeeded/);

    const list = rostercal(['feeds', 'list', '--json'], env);
    expect(await list.exit, list.output()).toBe(0);
    expect((JSON.parse(list.stdout()) as { url: string }[]).map((f) => f.url)).toEqual(urls);

    const sync = rostercal(['sync'], env);
    expect(await sync.exit, sync.output()).toBe(1);
    expect(sync.output()).toContain(
      `rostercal sync: nothing was pulled, and no run could be recorded: the store can be read but not written (${data} is on a read-only filesystem)`,
    );

    await serveChecks(env, urls, /cannot be written: .*read-?only/i);
  }, 180_000);

  it('a read-only store that needs a migration says so; an empty read-only DATA_DIR fails start-up saying why', async () => {
    const { data, env } = await pulledStore('behind');
    // As if this store were made by an older rostercal: its last migration not yet applied.
    const db = new DatabaseSync(path.join(data, 'rostercal.sqlite'));
    const last = db.prepare('SELECT name FROM schema_migrations ORDER BY name DESC LIMIT 1').get() as {
      name: string;
    };
    db.prepare('DELETE FROM schema_migrations WHERE name = ?').run(last.name);
    db.close();
    execFileSync('mount', ['-o', 'remount,ro', data]);
    const status = rostercal(['status'], env);
    expect(await status.exit).toBe(1);
    expect(status.output()).toContain(
      `rostercal status: the store can be read but not written (${data} is on a read-only filesystem), and it needs 1 migration(s) it cannot take (${last.name}): start once with it writable`,
    );

    const empty = path.join(dir, 'empty');
    await mkdir(empty);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,ro', 'tmpfs', empty]);
    mounts.push(empty);
    const serve = rostercal(['serve'], {
      ...schoolEnv(sandbox, { DATA_DIR: empty }),
      PORT: String(await freePort()),
    });
    expect(await serve.exit, serve.output()).toBe(1);
    expect(serve.output()).toMatch(
      /^rostercal serve: start-up failed: no store at .*rostercal\.sqlite, and none can be made there: .* is on a read-only filesystem$/m,
    );
  }, 180_000);

  it('DATA_DIR full before serve starts: serve serves the store, /readyz 503 naming the full disk', async () => {
    const { data, env, urls } = await pulledStore('full');
    const free = Number(
      execFileSync('df', ['--output=avail', '-B1', data], { encoding: 'utf8' }).split('\n')[1],
    );
    execFileSync('fallocate', ['-l', String(free), path.join(data, 'filler')]);
    await serveChecks(env, urls, /is full|no space left/i);
  }, 180_000);
});
