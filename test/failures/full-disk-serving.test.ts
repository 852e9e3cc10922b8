// Serving never depends on writing (issue 27): DATA_DIR on a real 80 MB filesystem, filled to the last byte with
// fallocate, sessions changed upstream. A feed whose render is out of date was written back to the store before
// it was served, so it answered 500 once the store refused the write, while the pull that made it out of date
// was recorded as succeeded. Now every feed answers 200 with the new data, the log and /readyz name the full
// disk, and no pull after the fill is recorded as succeeded (each fire leaves a failed run, or says why not).
// The filesystem is a tmpfs mounted by the test (CI runs as root); it is unmounted whatever happens.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, stopped, writeServeConfig } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';
import { mountTmpfs, type Tmpfs } from '../support/tmpfs.ts';
import { until } from '../support/until.ts';

/** SQLite's words for a full disk, or (a store a worker opened on the full disk) why it opened read-only. */
const FULL = /database or disk is full|filesystem is full/;

interface Run {
  id: number;
  kind: string;
  status: string;
  errors: string[];
}

/** The school's recent runs, newest first, as `rostercal status --json` tells them. */
async function runs(env: Record<string, string>): Promise<Run[]> {
  const status = rostercal(['status', '--json', '--runs', '50'], env);
  expect(await status.exit, status.output()).toBe(0);
  return (JSON.parse(status.stdout()) as { runs: Run[] }).runs;
}

describe('a full disk under `rostercal serve` (DATA_DIR on an 80 MB tmpfs)', () => {
  let sandbox: Sandbox;
  let disk: Tmpfs;
  let dir: string;
  let data: string;
  beforeAll(async () => {
    // 80 MB, not tmpfs.ts's 48: the week sandbox's school is in term all year (clock.ts), and its store at this
    // scale outgrew 48 MB before the fill (sync --full and the renders filled it, fallocate found nothing free).
    disk = await mountTmpfs('fulldisk', 80);
    ({ dir, data } = disk);
    // The school scale: 120 teams, ~115 staff, 23 activities, as the issue measured.
    sandbox = await startWeekSandbox({ seed: 11, scale: 'school' });
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    await disk?.close();
  });

  it('answers every feed with the new data, names the full disk in the log and /readyz, records no success', async () => {
    const port = await freePort();
    // Pulls every 4 seconds, so the next pull comes soon after the upstream changes.
    const config = writeServeConfig(path.join(dir, 'rostercal.json'), {
      upstream: sandbox,
      port,
      dataDir: data,
      incremental: '*/4 * * * * *',
    });
    const env = { ROSTERCAL_CONFIG: config, LOG_LEVEL: 'info' };
    const synced = rostercal(['sync', '--full'], env);
    expect(await synced.exit, synced.output()).toBe(0);
    const list = rostercal(['feeds', 'list', '--json'], env);
    expect(await list.exit, list.output()).toBe(0);
    const feeds = (JSON.parse(list.stdout()) as { scope: string; id: number; url: string }[]).filter(
      (f) => f.scope !== 'student',
    );
    expect(feeds.filter((f) => f.scope === 'team').length).toBeGreaterThanOrEqual(100);

    const serve = rostercal(['serve'], env);
    let serveSaid = '';
    let lastBeforeFill = 0;
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 90_000);
      // A scheduled pull and its re-render (every feed `feeds list` issued), then a pull that changed nothing (and
      // so re-rendered nothing) before the disk fills: what follows is the pull that reads the change alone.
      await until(
        'a re-render, then a pull with nothing new',
        () => {
          const out = serve.output();
          const rendered = out.indexOf('"msg":"feeds re-rendered"');
          return (
            rendered >= 0 &&
            /"status":"succeeded"/.test(out.slice(out.indexOf('"msg":"pull started"', rendered)))
          );
        },
        240_000, // a deadline, not a measure: a school-scale pull at load ~40 took over 90 s
        250,
      );
      const base = `http://127.0.0.1:${port}`;
      const fetchAll = async () => {
        const answers: { scope: string; scopeId: number; status: number; body: string }[] = [];
        for (const f of feeds) {
          const res = await fetch(`${base}${new URL(f.url).pathname}`);
          answers.push({ scope: f.scope, scopeId: f.id, status: res.status, body: await res.text() });
        }
        return answers;
      };
      expect((await fetchAll()).filter((a) => a.status !== 200)).toEqual([]);

      lastBeforeFill = Math.max(...(await runs(env)).map((r) => r.id));
      // Fill the filesystem to the last byte.
      disk.fillOnce();
      expect(disk.available()).toBe(0);

      // Sessions of three days change upstream: their staff's, activities' and teams' feeds are out of date. The
      // three days from the next session on, not from today: in a school holiday the next days have none.
      const now = Date.parse(sandbox.now());
      const next = Math.min(...sandbox.school.sessions.filter((s) => s.start > now).map((s) => s.start));
      const changed = sandbox.school.sessions.filter(
        (s) => s.start >= next && s.start < next + 3 * 86_400_000,
      );
      expect(changed.length).toBeGreaterThan(10);
      for (const s of changed) {
        s.title = `${s.title} (moved)`;
        s.updatedAt = now;
      }
      sandbox.setNow(sandbox.now()); // a new state version: listings are read afresh
      const mark = serve.output().length;

      // The next pull's outcome: a pull started after the change that finished (its re-render with it), or a
      // fire that could not start one.
      await until(
        'the next pull',
        () => {
          const since = serve.output().slice(mark);
          if (/fire skipped: the store failed/.test(since)) return true;
          const started = since.indexOf('"msg":"pull started"');
          return (
            started >= 0 &&
            /"msg":"(feed re-render failed|feeds re-rendered|pull failed)"/.test(since.slice(started))
          );
        },
        240_000,
        250,
      );

      const answers = await fetchAll();
      const failed = answers.filter((a) => a.status !== 200);
      expect(
        failed.map((a) => `${a.scope} ${a.scopeId}: ${a.status} ${JSON.stringify(a.body.slice(0, 80))}`),
      ).toEqual([]);
      // Served from what the store can read: the changed sessions are there.
      const activity = changed[0]!.activityId;
      const activityFeed = answers.find((a) => a.scope === 'activity' && a.scopeId === activity)!;
      expect(activityFeed.body).toMatch(/\(moved\)/);

      // The log says the disk is full.
      expect(serve.output().slice(mark)).toMatch(FULL);
      // /readyz says so with the reason; the replica still serves (stale-ok).
      const ready = await fetch(`${base}/readyz`);
      const readyBody = await ready.text();
      expect(ready.status, readyBody).toBe(503);
      expect(JSON.parse(readyBody).store, readyBody).toMatch(FULL);
      expect((await fetch(`${base}/readyz?stale-ok`)).status).toBe(200);
    } catch (err) {
      const said = serve
        .output()
        .split('\n')
        .filter((l) => !l.includes('"msg":"request"'))
        .map((l) => l.slice(0, 400));
      throw new Error(`${(err as Error).message}\n--- serve said:\n${said.join('\n').slice(-8000)}`);
    } finally {
      await stopped(serve);
      serveSaid = serve.output();
    }

    // No pull started after the fill is recorded as succeeded: each is failed (naming the full disk) or, when the
    // store refused even that, left as it started (`running`, then `interrupted`) with the log saying why; a fire
    // that could not even record its start said so (`fire skipped: the store failed (…)`).
    const after = (await runs(env)).filter((r) => r.id > lastBeforeFill && r.kind !== 'push');
    for (const r of after) expect(r.status, JSON.stringify(r)).not.toMatch(/succeeded|suspicious/);
    for (const r of after.filter((r) => r.status === 'failed')) expect(r.errors.join('; ')).toMatch(FULL);
    if (after.some((r) => r.status !== 'failed'))
      expect(serveSaid).toMatch(/database or disk is full.*could not record the failed run/);
    // No run at all: the fire could not even be claimed. serve says so in one log line, with the store's error.
    if (after.length === 0)
      expect(
        serveSaid
          .split('\n')
          .filter((l) => l.includes('"msg":"fire skipped: the store failed"'))
          .some((l) => FULL.test(l)),
        'a "fire skipped: the store failed" line naming the full disk',
      ).toBe(true);
  }, 600_000);
});
