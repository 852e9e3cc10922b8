// Issue 28: serve ran a feed re-render pass (a worker thread each) after every pull, even one that changed
// nothing, and 50 schools queued on it. A pull that changed nothing a feed depends on (data version, the day's
// window, the set of issued feeds) now starts no pass, whichever replica runs it; a change still reaches the bytes.
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { storeFeedsOf } from '../../src/feeds/feeds-after-pull.ts';
import { type SchoolRenderer, workerRenderer } from '../../src/feeds/school-renderer.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { type Harness, startHarness } from './harness.ts';

const SCHOOL = 'hill';
const DAY = 86_400_000;
let h: Harness;
/** The "feeds re-rendered" lines serve logs, one per pass. */
const passes: { rendered: number; unchanged: number; feeds: number }[] = [];
const log = pino(
  { level: 'info' },
  {
    write(line: string) {
      const o = JSON.parse(line) as { msg: string; rendered: number; unchanged: number; feeds: number };
      if (o.msg === 'feeds re-rendered')
        passes.push({ rendered: o.rendered, unchanged: o.unchanged, feeds: o.feeds });
    },
  },
);

/** A replica: its own feed service (its own memory, its own clock offset) and render worker on the same store. */
function replica(dayOffset = 0): { renderer: SchoolRenderer; feeds: FeedService } {
  const feeds = new FeedService({
    store: h.store,
    now: () => new Date(Date.parse(h.sandbox.now()) + dayOffset * DAY),
  });
  const renderer = workerRenderer({
    feeds,
    store: { file: path.join(h.dir, 'rostercal.sqlite') },
    onFallback: (why) => {
      throw new Error(`fell back: ${why}`);
    },
  });
  return { renderer, feeds };
}

/** An incremental pull as serve runs it: the re-render inside the pull, before its run is recorded. */
async function servePull(r: SchoolRenderer) {
  const before = passes.length;
  const storeOutputs = storeFeedsOf({ feeds: r, log });
  const summary = await pullSchool({
    store: h.store,
    client: h.client,
    school: h.school,
    kind: 'incremental',
    now: () => new Date(h.sandbox.now()),
    storeOutputs: () => storeOutputs(SCHOOL),
  });
  expect(summary.status).toBe('succeeded');
  return passes.slice(before);
}

const opened: SchoolRenderer[] = [];
beforeAll(async () => {
  h = await startHarness({ scale: 'small' });
});
afterAll(async () => {
  for (const r of opened) await r.close();
  await h?.close();
});

describe('the feed re-render after a pull', () => {
  it('runs no pass when nothing a feed depends on changed, on any replica; runs one when the day or the issued feeds do', async () => {
    const defs = await listFeedDefs(h.store, SCHOOL);
    const [held, ...issued] = defs;
    await h.tokens.ensureAll(SCHOOL, issued);
    const a = replica();
    const b = replica();
    opened.push(a.renderer, b.renderer);

    // The first pass renders every issued feed.
    const first = await servePull(a.renderer);
    expect(first).toHaveLength(1);
    expect(first[0]!.rendered).toBe(issued.length);

    // Nothing changed upstream: no pass on this replica, nor on another whose memory knows nothing of the first.
    expect(await servePull(a.renderer)).toEqual([]);
    expect(await servePull(b.renderer)).toEqual([]);

    // A feed issued since: the next pull renders it, and only it.
    await h.tokens.ensure(SCHOOL, held!.scope, held!.scopeId);
    expect(await servePull(b.renderer)).toEqual([{ feeds: defs.length, rendered: 1, unchanged: 0 }]);
    expect(await servePull(a.renderer)).toEqual([]);

    // The next day the window moves: every feed is made again, though the data did not change.
    const tomorrow = replica(1);
    opened.push(tomorrow.renderer);
    const moved = await servePull(tomorrow.renderer);
    expect(moved).toHaveLength(1);
    expect(moved[0]!.rendered).toBe(defs.length);
    expect(await servePull(tomorrow.renderer)).toEqual([]);
  }, 180_000);

  it('brings a change made upstream into the stored feed bytes at the next pull', async () => {
    const r = replica(1);
    opened.push(r.renderer);
    await servePull(r.renderer);
    const now = Date.parse(h.sandbox.now());
    const teamFeeds = new Set(
      (await listFeedDefs(h.store, SCHOOL)).filter((d) => d.scope === 'team').map((d) => d.scopeId),
    );
    const session = h.sandbox.school.sessions.find(
      (s) =>
        s.start > now + 2 * DAY && !s.cancelled && s.teamIds[0] !== undefined && teamFeeds.has(s.teamIds[0]),
    );
    expect(session).toBeDefined();
    const teamId = session!.teamIds[0]!;
    const bytes = async () => {
      const stored = await h.store.feeds.getRenderedFeed(SCHOOL, 'team', teamId);
      return { etag: stored?.etag, ics: stored ? gunzipSync(stored.gzip).toString('utf8') : '' };
    };
    const before = await bytes();
    const cancelled = (ics: string) => (ics.match(/STATUS:CANCELLED/g) ?? []).length;

    const email = h.sandbox.school.users.find((u) => u.email)!.email;
    const res = await fetch(`${h.sandbox.url}/sessions`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${h.sandbox.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        email,
        reasonForChange: 'test',
        sessions: [{ id: session!.id, cancelled: true }],
      }),
    });
    expect(res.status).toBe(200);

    const pass = await servePull(r.renderer);
    expect(pass).toHaveLength(1);
    expect(pass[0]!.rendered).toBeGreaterThan(0);
    const after = await bytes();
    expect(after.etag).not.toBe(before.etag);
    expect(cancelled(after.ics)).toBe(cancelled(before.ics) + 1);
    // And a request on another replica is answered those bytes.
    const other = replica(1);
    opened.push(other.renderer);
    expect((await other.feeds.get(SCHOOL, 'team', teamId))?.etag).toBe(after.etag);
  }, 180_000);
});
