// Issue 28, "Never a stall": while a pull of a school writes and its re-render pass (on a worker thread in serve)
// brings the feeds to the new data version, a request answers the feed's stored bytes instead of projecting and
// rendering it on the event loop every request shares (a district's projection context alone held it for
// seconds). Once the hold ends, the next request gets the new bytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { type Harness, startHarness } from './harness.ts';

describe('renders held during a pull', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
    await h.pull('full');
  });
  afterAll(() => h?.close());

  it('answers the stored bytes while held, and renders the new data once released', async () => {
    let renders = 0;
    const now = () => new Date(h.sandbox.now());
    const service = () =>
      new FeedService({ store: h.store, now, dataVersionTtlMs: 0, onRender: () => renders++ });
    const feeds = service();
    const sessions = await h.store.records.listSessions('hill', { from: now().toISOString() });
    const session = sessions.find((s) => s.teams.length > 0 && !s.cancelled)!;
    const team = session.teams[0]!.id;
    const before = (await feeds.get('hill', 'team', team))!;
    expect(renders).toBe(1);

    // The edit a pull brings in: the data version moves.
    const email = h.sandbox.school.users.find((u) => u.email && !u.frozen)!.email;
    await h.client.updateSessions({
      email,
      sessions: [{ id: session.id, studentParentNotes: 'Moved to the sports hall.' }],
    });
    const release = feeds.holdRenders('hill');
    await h.pull('incremental');

    // From memory, and from the store by a service that has nothing in memory (its renders held too).
    expect((await feeds.get('hill', 'team', team))!.etag).toBe(before.etag);
    const other = service();
    const releaseOther = other.holdRenders('hill');
    expect((await other.get('hill', 'team', team))!.etag).toBe(before.etag);
    expect(renders).toBe(1);

    release();
    releaseOther();
    const after = (await feeds.get('hill', 'team', team))!;
    expect(after.etag).not.toBe(before.etag);
    expect(after.body.toString()).toContain('Moved to the sports hall.');
    expect(renders).toBe(2);
  }, 60_000);
});
