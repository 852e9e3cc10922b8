// The school re-render (src/feeds/school-rerender.ts), through the feed service that holds it, over a school pulled
// from the sandbox into a real SQLite store: which feeds a pass is about (those with a live token, or all), what
// its stored mark lets later passes skip (a pass over all covers one over the issued feeds, not the other way;
// `force` never skips), a pull that changed one session rendering only the feeds that show it while the others'
// stored bytes are confirmed for the new data version, and stored renders of subjects that are gone deleted.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FeedDef, listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { type Harness, startHarness } from './harness.ts';

const SCHOOL = 'hill';
const DAY = 86_400_000;
let h: Harness;
let defs: FeedDef[];

beforeAll(async () => {
  h = await startHarness({ scale: 'small' });
  defs = await listFeedDefs(h.store, SCHOOL);
}, 120_000);
afterAll(() => h?.close());

/** Each stored feed (families aside): its ETag and the data version it is current for. */
async function stored(): Promise<Map<string, { etag: string; dataVersion: number }>> {
  const out = new Map<string, { etag: string; dataVersion: number }>();
  for (const s of await h.store.feeds.listRenderedFeedStates(SCHOOL))
    if (s.scope !== 'family')
      out.set(`${s.scope}:${s.scopeId}`, { etag: s.etag, dataVersion: s.dataVersion });
  return out;
}

describe('the school re-render', () => {
  it('renders the feeds with a live token, or all with `all`; its mark lets a later pass skip, `all` covering the issued', async () => {
    const [first, second] = defs.filter((d) => d.scope === 'team');
    await h.tokens.ensure(SCHOOL, first!.scope, first!.scopeId);
    await h.tokens.ensure(SCHOOL, second!.scope, second!.scopeId);

    const live = await h.feeds.renderSchool(SCHOOL);
    expect(live).toMatchObject({ feeds: 2, rendered: 2, unchanged: 0, skipped: false });
    expect([...(await stored()).keys()].sort()).toEqual(
      [`team:${first!.scopeId}`, `team:${second!.scopeId}`].sort(),
    );
    // Nothing changed: the issued feeds are current, but a pass over all has work.
    expect(await h.feeds.skippedRender(SCHOOL)).toMatchObject({
      skipped: true,
      dataVersion: live.dataVersion,
    });
    expect(await h.feeds.skippedRender(SCHOOL, { all: true })).toBeNull();

    const all = await h.feeds.renderSchool(SCHOOL, { all: true });
    expect(all).toMatchObject({ feeds: defs.length, rendered: defs.length - 2, skipped: false });
    expect((await stored()).size).toBe(defs.length);
    expect((await h.feeds.renderSchool(SCHOOL, { all: true })).skipped).toBe(true);
    expect((await h.feeds.renderSchool(SCHOOL)).skipped).toBe(true);

    // A feed issued since changes the mark: the next pass runs, finding it current already.
    const third = defs.find((d) => d !== first && d !== second)!;
    await h.tokens.ensure(SCHOOL, third.scope, third.scopeId);
    expect(await h.feeds.renderSchool(SCHOOL)).toMatchObject({ feeds: 3, rendered: 0, skipped: false });

    // `force` renders every selected feed, mark or not.
    expect(await h.feeds.renderSchool(SCHOOL, { force: true })).toMatchObject({ feeds: 3, rendered: 3 });
  }, 120_000);

  it('after a pull that changed one session, renders only the feeds that show it and confirms the others', async () => {
    await h.feeds.renderSchool(SCHOOL, { all: true });
    const before = await stored();
    const now = Date.parse(h.sandbox.now());
    const session = h.sandbox.school.sessions.find(
      (s) => s.start > now + 2 * DAY && s.start < now + 20 * DAY && !s.cancelled && s.teamIds.length === 1,
    )!;
    expect(session).toBeDefined();
    const res = await fetch(`${h.sandbox.url}/sessions`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${h.sandbox.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        email: h.sandbox.school.users.find((u) => u.email)!.email,
        sessions: [{ id: session.id, studentParentNotes: 'Bring boots (re-render test)' }],
      }),
    });
    expect(res.status).toBe(200);
    await h.pull('incremental');

    const pass = await h.feeds.renderSchool(SCHOOL, { all: true });
    expect(pass.dataVersion).toBeGreaterThan([...before.values()][0]!.dataVersion);
    expect(pass.rendered).toBeGreaterThan(0);
    expect(pass.rendered).toBeLessThan(defs.length / 2);
    expect(pass.rendered + pass.unchanged).toBe(defs.length);
    const after = await stored();
    const changed = [...after].filter(([k, v]) => v.etag !== before.get(k)?.etag).map(([k]) => k);
    expect(changed).toContain(`team:${session.teamIds[0]}`);
    expect(changed).toHaveLength(pass.rendered);
    // Every feed, rendered or confirmed, is current for the new version.
    for (const v of after.values()) expect(v.dataVersion).toBe(pass.dataVersion);
  }, 120_000);

  it('deletes the stored render of a feed whose subject is gone', async () => {
    const record = (await h.store.feeds.getRenderedFeed(SCHOOL, 'team', defs[0]!.scopeId))!;
    // A team the school no longer has (as after a team was deleted upstream), its bytes still stored.
    await h.store.feeds.saveRenderedFeed({ ...record, scopeId: 987_654, gzip: gzipSync('BEGIN:VCALENDAR') });
    expect(await h.store.feeds.getRenderedFeed(SCHOOL, 'team', 987_654)).not.toBeNull();
    await h.feeds.renderSchool(SCHOOL, { force: true });
    expect(await h.store.feeds.getRenderedFeed(SCHOOL, 'team', 987_654)).toBeNull();
    expect((await stored()).size).toBe(defs.length);
  }, 120_000);
});
