// A rotation asked on the admin page while another process holds the SQLite file's write lock (a `rostercal sync`
// or a backup beside serve, stuck). The rotation's BEGIN IMMEDIATE waited for the lock up to SQLITE_BUSY_WAIT_MS
// (60 s): no answer in 20 s (the test's limit) on 8 Dec. Now a request's transaction waits at most
// the request deadline (4 s): 503 in time, saying the link was not changed (a statement refused as busy did
// nothing), and it was not; once the lock is let go the same rotation goes through.
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { PG_READ_DEADLINE_MS } from '../../src/store/pg-deadline.ts';
import { type RotationServe, startRotationServe } from '../support/rotation-serve.ts';

const ADMIN_TOKEN = 'held-sqlite-admin-token-0123456789abcdefghi';
/** The request deadline and a margin for a loaded machine. */
const ANSWER_BOUND_MS = PG_READ_DEADLINE_MS + 2500;
/** How long the test waits for an answer before calling it a hang. */
const HANG_MS = 20_000;

let serve: RotationServe;
beforeAll(async () => {
  serve = await startRotationServe({ name: 'held-sqlite', adminToken: ADMIN_TOKEN });
}, 180_000);
afterAll(() => serve?.close());

const teamFeed = () => serve.teamFeed();
const status = (url: string) => serve.status(url);
const rotate = (f: FeedListing) => serve.rotate(f, HANG_MS);

it('a rotation while another process holds the write lock answers 503 in time, and nothing changed', async () => {
  const feed = await teamFeed();
  expect(await status(feed.url!)).toBe(200);
  const other = new DatabaseSync(path.join(serve.dir, 'rostercal.sqlite'));
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
