// A feed is made by two paths: on request (one feed's sessions read from the store) and by the school re-render
// after a pull (the window read once and grouped by scope). Both must give every feed the same sessions in the
// same order: the same bytes, and the same `inputs` (what decides whether a feed is rendered again). Inputs that
// differ by path make a feed one path rendered look changed to the other, so it is rendered again for nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectionContext } from '../../src/calendar/context.ts';
import { listFeedDefs } from '../../src/feeds/feed-defs.ts';
import { candidateQuery, inScope, ScopeIndex } from '../../src/feeds/feed-scope.ts';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { type Harness, startHarness } from './harness.ts';

const SCHOOL = 'hill';

describe('the request path and the school re-render', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ seed: 11 });
  });
  afterAll(() => h?.close());

  it('give every feed the same sessions: same inputs and same bytes', async () => {
    const now = () => new Date(h.sandbox.now());
    const defs = await listFeedDefs(h.store, SCHOOL);
    const byRequest = new Map<string, { inputs: string; body: Buffer }>();
    const request = new FeedService({ store: h.store, now, dataVersionTtlMs: 0 });
    for (const d of defs) {
      const r = await request.get(SCHOOL, d.scope, d.scopeId);
      expect(r, `${d.scope} ${d.scopeId}`).not.toBeNull();
      byRequest.set(`${d.scope}:${d.scopeId}`, { inputs: '', body: r!.body });
    }
    for (const s of await h.store.feeds.listRenderedFeedStates(SCHOOL)) {
      const seen = byRequest.get(`${s.scope}:${s.scopeId}`);
      if (seen) seen.inputs = s.inputs;
    }

    const pass = new FeedService({ store: h.store, now, dataVersionTtlMs: 0 });
    const result = await pass.renderSchool(SCHOOL, { all: true, force: true });
    expect(result.rendered).toBe(defs.length);
    const differing: string[] = [];
    const perScope = new Map<string, number>();
    const states = new Map(
      (await h.store.feeds.listRenderedFeedStates(SCHOOL)).map((s) => [`${s.scope}:${s.scopeId}`, s]),
    );
    for (const d of defs) {
      const key = `${d.scope}:${d.scopeId}`;
      const seen = byRequest.get(key)!;
      perScope.set(d.scope, (perScope.get(d.scope) ?? 0) + 1);
      const body = (await pass.get(SCHOOL, d.scope, d.scopeId))!.body;
      if (states.get(key)?.inputs !== seen.inputs) differing.push(`${key} inputs`);
      if (!body.equals(seen.body)) differing.push(`${key} bytes`);
    }
    expect(differing).toEqual([]);
    // Every scope was compared, not one that happened to be empty.
    expect([...perScope.keys()].sort()).toEqual(['activity', 'staff', 'student', 'team']);
  });

  it("group the window as the store's per-scope query reads it, for every feed of every scope", async () => {
    const w = new FeedService({ store: h.store, now: () => new Date(h.sandbox.now()) }).currentWindow();
    const [from, to] = [w.from.toISOString(), w.to.toISOString()];
    const ctx = await loadProjectionContext(h.store, SCHOOL);
    const index = new ScopeIndex(ctx.teamStudents);
    for (const s of await h.store.records.listSessions(SCHOOL, { from, to })) index.add(s);
    const nonEmpty = new Map<string, number>();
    for (const d of await listFeedDefs(h.store, SCHOOL)) {
      // The store's SQL, written apart from feed-scope.ts: an independent reading of the same rule.
      const read = await h.store.records.listSessions(SCHOOL, candidateQuery(d.scope, d.scopeId, from, to));
      const ids = read.map((s) => s.id);
      expect(
        index.of(d.scope, d.scopeId).map((s) => s.id),
        `${d.scope} ${d.scopeId}`,
      ).toEqual(ids);
      expect(inScope(d.scope, d.scopeId, read, ctx.teamStudents).map((s) => s.id)).toEqual(ids);
      if (ids.length) nonEmpty.set(d.scope, (nonEmpty.get(d.scope) ?? 0) + 1);
    }
    expect([...nonEmpty.keys()].sort()).toEqual(['activity', 'staff', 'student', 'team']);
  });
});
