// A rotated feed URL never answers again when the database and the rotation record file are both lost while
// the feed secret survives (FEED_SECRET in the environment, an empty volume): the service cannot vouch for
// any URL, so it answers 503 with Retry-After (calendar apps try again later; a 404 would end subscriptions),
// says why in /readyz, and `feeds list` prints nothing until an operator decides. Everything as an operator
// and a family meet it: `sync`, `feeds …` and `serve` as child processes, HTTP from outside.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;
let base: string;
const running: Child[] = [];

const cli = (args: string[]) => runRostercal(args, env);
// Each test runs several CLI processes and a serve start: seconds each on a loaded machine (the first timed out at
// the default 60 s at load ~25). A deadline only; nothing here is timed.
const CLI_TEST_MS = 240_000;

async function startServe(): Promise<Child> {
  const child = rostercal(['serve'], env);
  running.push(child);
  await child.waitFor(/Stop with Ctrl-C/, 90_000);
  return child;
}

async function stop(child: Child): Promise<void> {
  child.proc.kill('SIGTERM');
  expect(await child.exit).toBe(0);
}

async function get(url: string): Promise<Response> {
  const res = await fetch(`${base}${new URL(url).pathname}`);
  await res.arrayBuffer();
  return res;
}

function loseEverythingButTheSecret(): void {
  for (const f of readdirSync(dir)) rmSync(path.join(dir, f), { recursive: true, force: true });
}

beforeAll(async () => {
  // serve and the CLI run on the real clock: a school of this week's shape stays inside their windows.
  sandbox = await startWeekSandbox({ seed: 14, scale: 'small' });
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-trust-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = {
    ...schoolEnv(sandbox, { DATA_DIR: dir }),
    PUBLIC_URL: base,
    PORT: String(port),
    FEED_SECRET: 'the-school-keeps-this-feed-secret-0123456789',
    LOG_LEVEL: 'warn',
  };
}, 60_000);

afterAll(async () => {
  for (const c of running) if (c.proc.exitCode === null) c.proc.kill('SIGTERM');
  await Promise.all(running.map((c) => c.exit));
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('FEED_SECRET survives, the database and the rotation record do not', () => {
  let rotatedOld: string;
  let rotatedNew: string;
  let other: string;

  it(
    'a new FEED_SECRET vouches for nothing until the operator says so (`feeds accept-store`)',
    async () => {
      expect((await cli(['sync'])).code).toBe(0);
      const refused = await cli(['feeds', 'list', '--json']);
      expect(refused.stderr).toMatch(/no feed rotation record vouches for FEED_SECRET.*feeds accept-store/s);
      expect(refused.stdout).not.toContain('/feeds/');
      expect(refused.code).toBe(1);
      const accepted = await cli(['feeds', 'accept-store']);
      expect(accepted.code, accepted.stderr).toBe(0);

      const rows = JSON.parse((await cli(['feeds', 'list', '--json'])).stdout) as FeedListing[];
      const teams = rows.filter((r) => r.scope === 'team');
      rotatedOld = teams[0]!.url!;
      other = teams[1]!.url!;
      const rotated = await cli(['feeds', 'rotate', 'team', String(teams[0]!.id), '--json']);
      expect(rotated.code, rotated.stderr).toBe(0);
      rotatedNew = (JSON.parse(rotated.stdout) as { url: string }).url;
    },
    CLI_TEST_MS,
  );

  it(
    'after losing both: no URL answers 200 or 404 but 503 with Retry-After; /readyz says why',
    async () => {
      loseEverythingButTheSecret();
      const serve = await startServe();
      try {
        for (const url of [rotatedOld, rotatedNew, other]) {
          const res = await get(url);
          expect(res.status, url).toBe(503);
          expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
          expect(res.headers.get('cache-control')).toBe('no-store');
        }
        // The landing page too; and a client asking many times is never told "gone" (no 404, no 429).
        expect((await get(rotatedOld.replace(/\.ics$/, ''))).status).toBe(503);
        for (let i = 0; i < 80; i++) expect((await get(rotatedOld)).status).toBe(503);
        const ready = await fetch(`${base}/readyz`);
        expect(ready.status).toBe(503);
        expect(JSON.stringify(await ready.json())).toMatch(/no feed rotation record vouches/);
        expect((await fetch(`${base}/healthz`)).status).toBe(200);
        expect(serve.output()).toMatch(/no feed rotation record vouches for FEED_SECRET/);

        // `feeds list` does not print the revoked URL (nor any) as current.
        const list = await cli(['feeds', 'list', '--json']);
        expect(list.code).toBe(1);
        expect(list.stdout).not.toContain(new URL(rotatedOld).pathname);
        expect(list.stderr).toMatch(/feeds accept-store/);
      } finally {
        await stop(serve);
      }
    },
    CLI_TEST_MS,
  );

  it(
    'the safe decision: a new FEED_SECRET and `feeds accept-store`: every URL new, the old ones 404',
    async () => {
      env.FEED_SECRET = 'a-new-feed-secret-after-the-loss-0123456789';
      const accepted = await cli(['feeds', 'accept-store']);
      expect(accepted.code, accepted.stderr).toBe(0);
      const serve = await startServe();
      try {
        const rows = JSON.parse((await cli(['feeds', 'list', '--json'])).stdout) as FeedListing[];
        expect(rows.length).toBeGreaterThan(0);
        for (const url of [rotatedOld, rotatedNew, other]) expect((await get(url)).status, url).toBe(404);
        expect((await get(rows.find((r) => r.scope === 'team')!.url!)).status).toBe(200);
        expect((await fetch(`${base}/readyz`)).status).toBe(200);
      } finally {
        await stop(serve);
      }
    },
    CLI_TEST_MS,
  );
});
