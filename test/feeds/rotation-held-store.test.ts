// A rotation asked on the admin page while another connection holds the feed tokens' table (PostgreSQL: a lock that
// lets reads through and stops writes, as a long migration or a stuck session would). The rotation's transaction had
// no bound: the request waited as long as the lock was held (no answer in 20 s, the test's limit, on 8 Dec). Now it
// answers within the request deadline (4 s) with a 503 that says what is known: the transaction was cut before its
// COMMIT, so nothing changed and the old URL works, before and after the lock is let go. And when what went
// unanswered was the COMMIT itself (held here by a deferred trigger of the test's waiting on a lock), it cannot be
// known: the page says the link may not have changed, and it did change once the lock was let go.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { PG_READ_DEADLINE_MS } from '../../src/store/pg-deadline.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type RotationServe, startRotationServe } from '../support/rotation-serve.ts';

const ADMIN_TOKEN = 'held-store-admin-token-0123456789abcdefghij';
/** The request deadline and a margin for a loaded machine (the reads before the transaction, the page). */
const ANSWER_BOUND_MS = PG_READ_DEADLINE_MS + 2500;
/** How long the test waits for an answer before calling it a hang. */
const HANG_MS = 20_000;

let db: TestDatabase;
let serve: RotationServe;

beforeAll(async () => {
  db = await createTestDatabase();
  serve = await startRotationServe({ name: 'held-store', adminToken: ADMIN_TOKEN, databaseUrl: db.url });
}, 180_000);

afterAll(async () => {
  await serve?.close();
  await db?.drop();
});

const teamFeed = () => serve.teamFeed();
const status = (url: string) => serve.status(url);
const rotate = (f: FeedListing) => serve.rotate(f, HANG_MS);

describe('a rotation while another connection holds the feed tokens’ table', () => {
  it('answers 503 within the request deadline, says the link was not changed, and it was not', async () => {
    const feed = await teamFeed();
    expect(await status(feed.url!)).toBe(200);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    let answer: Awaited<ReturnType<typeof rotate>>;
    try {
      // EXCLUSIVE: reads go on (the feed itself, the rotation's reads of the live token), writes wait.
      await holder.query('begin');
      await holder.query('lock table feed_tokens in exclusive mode');
      answer = await rotate(feed);
      console.info(`rotation while held: ${answer.status} after ${Math.round(answer.ms)} ms`);
      expect(await status(feed.url!)).toBe(200);
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
    }
    expect(answer.status, answer.page.slice(0, 400)).toBe(503);
    expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(answer.page).toContain('The link was not changed');
    expect(answer.page).not.toContain(ADMIN_TOKEN);
    // Let go: what was cut never lands (its COMMIT was never sent), and the old URL works on.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await teamFeed()).url).toBe(feed.url);
    expect(await status(feed.url!)).toBe(200);
    // The store free again, the same rotation goes through.
    const again = await rotate(feed);
    expect(again.status, again.page.slice(0, 400)).toBe(200);
    expect(await status(feed.url!)).toBe(404);
  }, 120_000);

  it('says the link may not have changed when its COMMIT went unanswered, and it did change', async () => {
    const feed = await teamFeed();
    expect(await status(feed.url!)).toBe(200);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    // Each rotation's COMMIT runs this trigger, which waits for a lock the holder takes.
    await holder.query(`create function held_commit() returns trigger language plpgsql as
      $$ begin perform pg_advisory_xact_lock(4242); return null; end $$`);
    await holder.query(`create constraint trigger held_commit after insert on feed_rotations
      deferrable initially deferred for each row execute function held_commit()`);
    let answer: Awaited<ReturnType<typeof rotate>>;
    try {
      await holder.query('select pg_advisory_lock(4242)');
      answer = await rotate(feed);
      console.info(`rotation whose commit was held: ${answer.status} after ${Math.round(answer.ms)} ms`);
    } finally {
      await holder.query('select pg_advisory_unlock(4242)');
    }
    try {
      expect(answer.status, answer.page.slice(0, 400)).toBe(503);
      expect(answer.ms).toBeLessThan(ANSWER_BOUND_MS);
      expect(answer.page).toContain('The link may not have changed');
      expect(answer.page).not.toContain('The link was not changed');
      // Let go, the COMMIT the request gave up on goes through: the page was right not to say it did not happen.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await teamFeed()).url).not.toBe(feed.url);
      expect(await status(feed.url!)).toBe(404);
    } finally {
      await holder.query('drop trigger held_commit on feed_rotations; drop function held_commit()');
      await holder.end();
    }
  }, 120_000);
});
