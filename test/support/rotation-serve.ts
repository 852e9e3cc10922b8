// One `rostercal serve` of a school of this week's shape, for tests that rotate its feeds from the admin page while
// its store is held (test/feeds/rotation-held-*.test.ts): its first team feed as `feeds list` gives it, what a URL
// answers, and a timed rotation.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rotateTimed } from './admin-rotation.ts';
import { type Child, rostercal, runRostercal, schoolEnv, stopped } from './cli.ts';
import { startWeekSandbox } from './clock.ts';
import { freePort } from './ports.ts';

export interface RotationServe {
  /** DATA_DIR (the SQLite file, when no databaseUrl was given). */
  dir: string;
  teamFeed(): Promise<FeedListing>;
  /** The status a feed URL answers now. */
  status(url: string): Promise<number>;
  /** POST /admin/feeds/rotate of `feed`: its status, page and time; status 0 when none came within `hangMs`. */
  rotate(feed: FeedListing, hangMs: number): ReturnType<typeof rotateTimed>;
  close(): Promise<void>;
}

export async function startRotationServe(opts: {
  name: string;
  adminToken: string;
  databaseUrl?: string;
}): Promise<RotationServe> {
  const sandbox: Sandbox = await startWeekSandbox({ seed: 31, scale: 'small' });
  const dir = await mkdtemp(path.join(tmpdir(), `rostercal-${opts.name}-`));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const store = opts.databaseUrl ? { DATABASE_URL: opts.databaseUrl, DATA_DIR: dir } : { DATA_DIR: dir };
  const env = {
    ...schoolEnv(sandbox, store),
    PUBLIC_URL: base,
    PORT: String(port),
    ADMIN_TOKEN: opts.adminToken,
  };
  let serve: Child | null = null;
  const close = async () => {
    if (serve) await stopped(serve);
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    serve = rostercal(['serve'], { ...env, LOG_LEVEL: 'warn' });
    await serve.waitFor(/Stop with Ctrl-C/, 120_000);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    dir,
    async teamFeed() {
      const list = await runRostercal(['feeds', 'list', '--json'], env);
      expect(list.code, list.stderr).toBe(0);
      return (JSON.parse(list.stdout) as FeedListing[]).find((r) => r.scope === 'team')!;
    },
    async status(url) {
      const res = await fetch(`${base}${new URL(url).pathname}`);
      await res.arrayBuffer();
      return res.status;
    },
    rotate: (f, hangMs) =>
      rotateTimed(base, opts.adminToken, { school: 'hillcrest', scope: f.scope, id: f.id }, hangMs),
    close,
  };
}
