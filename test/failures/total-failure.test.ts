// Total failure fails fast (issue 41). Against an upstream answering 5xx to every request, the real `rostercal
// sync` exits 1 within 90 s, incremental and full, saying the upstream is down; a single endpoint failing alone
// still gets its retries and the rest is read. Before the fix each resource spent its own ~63 s of retries: 191 s
// for an incremental pull and 631 s for a full one (192.7 s and 641.8 s of process time, measured the same way).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox, weekSandboxOptions } from '../support/clock.ts';
import { reverseProxy } from '../support/proxy.ts';

/** The product's promise: a pull against an upstream in total failure ends within this. */
const WITHIN_MS = 90_000;

describe('an upstream in total failure (rostercal sync)', () => {
  let good: Sandbox;
  let failing: Sandbox;
  let dir: string;
  beforeAll(async () => {
    good = await startWeekSandbox({ seed: 4, scale: 'small' });
    failing = await startSandbox(weekSandboxOptions({ seed: 4, scale: 'small', errorRate: 1 }));
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-total-failure-'));
    // A store that has had its complete full pull, so `sync` without --full runs incremental.
    const seeded = rostercal(['sync', '--full'], schoolEnv(good, { DATA_DIR: dir }));
    expect(await seeded.exit, seeded.output()).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await good?.close();
    await failing?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function lastRun() {
    const store = await openStore({ dataDir: dir });
    try {
      const [run] = await store.runs.listRuns('hillcrest', { limit: 1 });
      return run!;
    } finally {
      await store.close();
    }
  }

  it.each([
    ['incremental', []],
    ['full', ['--full']],
  ])(
    '%s: exits 1 within 90 s, saying the upstream is down; the next pull tries again',
    async (kind, args) => {
      const began = Date.now();
      const child = rostercal(['sync', ...args], schoolEnv(failing, { DATA_DIR: dir }));
      const code = await child.exit;
      const tookMs = Date.now() - began;
      expect(code, child.output()).toBe(1);
      const run = await lastRun();
      expect(run.kind).toBe(kind);
      expect(run.status).toBe('failed');
      // The run's own record (from the pull's start) and the whole process, start-up included.
      const ranMs = Date.parse(run.finishedAt!) - Date.parse(run.startedAt);
      expect(ranMs, child.output()).toBeLessThan(WITHIN_MS);
      expect(tookMs, child.output()).toBeLessThan(WITHIN_MS);
      expect(child.output()).toMatch(/answered nothing but errors and timeouts for \d+ s/);
      expect(child.output()).toMatch(/the next run tries again/);
      expect(child.output()).toMatch(/not attempted/);
    },
    150_000,
  );

  it('one endpoint failing alone: it gets its retries, and the rest is read', async () => {
    const front = await reverseProxy(good.url, {
      intercept: (req, res) => {
        if (new URL(req.url ?? '/', 'http://x').pathname !== '/teams') return false;
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"status":500,"message":"this endpoint is broken"}}');
        return true;
      },
    });
    try {
      const child = rostercal(['sync'], schoolEnv({ url: front.url, token: good.token }, { DATA_DIR: dir }));
      expect(await child.exit, child.output()).toBe(1);
      const run = await lastRun();
      expect(run.status).toBe('failed');
      // The teams listing's six retries (1+2+4+…+32 s), then absences and sessions read as ever.
      expect(run.retries, child.output()).toBeGreaterThanOrEqual(6);
      expect(child.output()).toMatch(/teams\s+FAILED/);
      expect(child.output()).not.toMatch(/not attempted/);
      expect(child.output()).not.toMatch(/answered nothing but errors/);
      expect(run.counts.sessions, child.output()).toBeDefined();
      expect(
        run.errors.filter((e) => !e.startsWith('teams:')),
        child.output(),
      ).toEqual([]);
    } finally {
      await front.close();
    }
  }, 150_000);
});
