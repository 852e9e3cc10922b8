// A rotation asked on the admin page while another process holds the SQLite file's write lock (a `rostercal sync`
// or a backup beside serve, stuck). The rotation's BEGIN IMMEDIATE waited for the lock up to SQLITE_BUSY_WAIT_MS
// (60 s): no answer in 20 s (the test's limit) on 8 Dec. Now a request's transaction waits at most
// the request deadline (4 s): 503 in time, saying the link was not changed (a statement refused as busy did
// nothing), and it was not; once the lock is let go the same rotation goes through.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { PG_READ_DEADLINE_MS } from '../../src/store/pg-deadline.ts';
import { rotateTimed } from '../support/admin-rotation.ts';
import { type Child, rostercal, runRostercal, schoolEnv, stopped } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

const ADMIN_TOKEN = 'held-sqlite-admin-token-0123456789abcdefghi';
/** The request deadline and a margin for a loaded machine. */
const ANSWER_BOUND_MS = PG_READ_DEADLINE_MS + 2500;
/** How long the test waits for an answer before calling it a hang. */
const HANG_MS = 20_000;

let sandbox: Sandbox;
let dir: string;
let base: string;
let env: Record<string, string>;
let serve: Child | null = null;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 31, scale: 'small' });
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-held-sqlite-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = { ...schoolEnv(sandbox, { DATA_DIR: dir }), PUBLIC_URL: base, PORT: String(port), ADMIN_TOKEN };
  serve = rostercal(['serve'], { ...env, LOG_LEVEL: 'warn' });
  await serve.waitFor(/Stop with Ctrl-C/, 120_000);
}, 180_000);

afterAll(async () => {
  if (serve) await stopped(serve);
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const teamFeed = async (): Promise<FeedListing> => {
  const list = await runRostercal(['feeds', 'list', '--json'], env);
  expect(list.code, list.stderr).toBe(0);
  return (JSON.parse(list.stdout) as FeedListing[]).find((r) => r.scope === 'team')!;
};
const status = async (url: string) => {
  const res = await fetch(`${base}${new URL(url).pathname}`);
  await res.arrayBuffer();
  return res.status;
};
const rotate = (f: FeedListing) =>
  rotateTimed(base, ADMIN_TOKEN, { school: 'hillcrest', scope: f.scope, id: f.id }, HANG_MS);

it('a rotation while another process holds the write lock answers 503 in time, and nothing changed', async () => {
  const feed = await teamFeed();
  expect(await status(feed.url!)).toBe(200);
  const other = new DatabaseSync(path.join(dir, 'rostercal.sqlite'));
  let answer: Awaited<ReturnType<typeof rotate>>;
  try {
    other.exec('BEGIN IMMEDIATE');
    answer = await rotate(feed);
    console.info(`rotation while the file was held: ${answer.status} after ${Math.round(answer.ms)} ms`);
    expect(await status(feed.url!)).toBe(200);
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  expect(answer.status, answer.page.slice(0, 400)).toBe(503);
  expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
  expect(answer.page).toContain('The link was not changed');
  expect((await teamFeed()).url).toBe(feed.url);
  expect(await status(feed.url!)).toBe(200);
  const again = await rotate(feed);
  expect(again.status, again.page.slice(0, 400)).toBe(200);
  expect(await status(feed.url!)).toBe(404);
}, 120_000);
