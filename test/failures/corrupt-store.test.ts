// Readiness that probes the store the way serving uses it (issue 27): a file damaged in the middle, where the
// few rows /readyz used to read do not live, is 503 at once with the reason, from a check of every page rather
// than from the age of the last successful pull. `/readyz?stale-ok` (the Docker health check) is 503 for that
// too, but stays 200 for a replica that is merely stale. Each through the real `rostercal serve`.
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, schoolEnv } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

async function stopped(child: Child): Promise<void> {
  if (child.proc.exitCode === null) child.proc.kill('SIGTERM');
  await child.exit;
}

describe('a store damaged in the middle, under `rostercal serve`', () => {
  let sandbox: Sandbox;
  let dir: string;
  let downUrl: string;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 11, scale: 'small' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-damaged-'));
    downUrl = `http://127.0.0.1:${await freePort()}`;
  });
  afterAll(async () => {
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('20 × 2 KB overwritten mid-file: /readyz and /readyz?stale-ok are 503 at once, naming the damage', async () => {
    const data = path.join(dir, 'damaged');
    const synced = rostercal(['sync', '--full'], schoolEnv(sandbox, { DATA_DIR: data }));
    expect(await synced.exit, synced.output()).toBe(0);
    // 20 blocks of 2 KB spread over the middle half of the file; the header page and the schema stay intact.
    const file = path.join(data, 'rostercal.sqlite');
    const { size } = await stat(file);
    const fh = await open(file, 'r+');
    for (let i = 0; i < 20; i++) {
      const at = Math.floor(size / 4 + (i * size) / 2 / 20);
      await fh.write(Buffer.alloc(2048, 0x5a), 0, 2048, at);
    }
    await fh.close();

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
  });

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
  });
});
