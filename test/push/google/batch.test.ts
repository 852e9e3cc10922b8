// push/google/batch.ts (batchSize > 1): multipart batches to the fake Google over HTTP, each part checked on its
// own — throttled parts come back later, a create whose id is taken is adopted (PUT), an update of a vanished
// event inserted again, a delete of a gone one done; quotaExceeded and a deleted calendar stop that calendar's
// later writes; a refused round trip fails its writes at once, a failed one is sent again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBatched } from '../../../src/push/google/batch.ts';
import type { GoogleClients } from '../../../src/push/google/clients.ts';
import { googleEventId } from '../../../src/push/stable-ids.ts';
import type { FakeGoogle } from '../../fakes/google-calendar.ts';
import { create, googleOnFake, identity, newCalendar, remove, update } from './on-fake.ts';

let fake: FakeGoogle;
let c: GoogleClients;
beforeAll(async () => {
  ({ fake, clients: c } = await googleOnFake({ batchSize: 3, concurrency: 1 }));
});
afterAll(() => fake?.close());

const outcome = (r: { ok: boolean; kind?: string }) => (r.ok ? 'ok' : r.kind);

describe('Google writes in batches', () => {
  it('packs batchSize writes to a round trip, and answers in the order asked', async () => {
    const cal = await newCalendar(c, 'team:1');
    fake.resetStats();
    const ids = [1, 2, 3, 4, 5, 6, 7];
    const r = await applyBatched(
      c,
      ids.map((s) => create(cal, s)),
    );
    expect(r).toEqual(ids.map((s) => ({ ok: true, remoteEventId: googleEventId(identity('team:1', s)) })));
    expect([fake.stats.batches, fake.stats.batchItems]).toEqual([3, 7]);
    expect(fake.liveEvents(cal.remoteCalendarId)).toHaveLength(7);
  });

  it('a taken id is adopted, a vanished event inserted again, a gone one deleted: each a second part', async () => {
    const cal = await newCalendar(c, 'team:2');
    const id = (s: number) => googleEventId(identity('team:2', s));
    await applyBatched(c, [create(cal, 1), create(cal, 2)]);
    await applyBatched(c, [remove(cal, 2, id(2))]);
    fake.resetStats();
    const r = await applyBatched(c, [
      create(cal, 1, 'Moved'),
      update(cal, 3, id(3)),
      remove(cal, 2, id(2)),
      remove(cal, 4, id(4)),
    ]);
    expect(r).toEqual([
      { ok: true, remoteEventId: id(1), adopted: true },
      { ok: true, remoteEventId: id(3), recreated: true },
      { ok: true, remoteEventId: null },
      { ok: true, remoteEventId: null },
    ]);
    // Three first parts (409, 404, 410), then the fourth (404) with the adoption's PUT and the re-creation's insert.
    expect([fake.stats.batches, fake.stats.batchItems]).toEqual([2, 6]);
    expect(fake.liveEvents(cal.remoteCalendarId).map((e) => [e.id, e.summary])).toEqual([
      [id(1), 'Moved'],
      [id(3), 'Practice 3'],
    ]);
  });

  it('throttled parts (429, 403 rateLimitExceeded) are sent again and counted throttled', async () => {
    const cal = await newCalendar(c, 'team:3');
    fake.knobs.faults = [
      { match: /^POST .*\/events$/, status: 429, limit: 1 },
      { match: /^POST .*\/events$/, status: 403, reason: 'rateLimitExceeded', limit: 1 },
    ];
    const before = { ...c.stats };
    try {
      const r = await applyBatched(c, [create(cal, 1), create(cal, 2), create(cal, 3)]);
      expect(r.map(outcome)).toEqual(['ok', 'ok', 'ok']);
      expect(c.stats.throttled - before.throttled).toBe(2);
      expect(c.stats.retries - before.retries).toBe(2);
    } finally {
      fake.knobs.faults = [];
    }
  });

  it("quotaExceeded, or a calendar deleted by hand, stops that calendar's later writes; another goes on", async () => {
    const [spent, gone, other] = [
      await newCalendar(c, 'team:4'),
      await newCalendar(c, 'team:5'),
      await newCalendar(c, 'team:6'),
    ];
    fake.knobs.quotaExceeded.add(spent.remoteCalendarId);
    fake.deleteCalendar(gone.remoteCalendarId);
    fake.resetStats();
    try {
      const r = await applyBatched(c, [
        create(spent, 1),
        create(gone, 1),
        create(other, 1),
        create(spent, 2),
        create(gone, 2),
        create(other, 2),
      ]);
      expect(r.map(outcome)).toEqual(['quota', 'calendar-gone', 'ok', 'quota', 'calendar-gone', 'ok']);
      // The second batch carries only the other calendar's write.
      expect([fake.stats.batches, fake.stats.batchItems]).toEqual([2, 4]);
    } finally {
      fake.knobs.quotaExceeded.delete(spent.remoteCalendarId);
    }
  });

  it('a refused round trip (401) fails its writes without asking again; a failed one (503) is sent again', async () => {
    const cal = await newCalendar(c, 'team:7');
    fake.knobs.faults = [{ match: /^POST \/batch\/calendar\/v3$/, status: 401, limit: 1 }];
    fake.resetStats();
    const refused = await applyBatched(c, [create(cal, 1), create(cal, 2)]);
    expect(refused.map(outcome)).toEqual(['error', 'error']);
    expect(refused[0]).toMatchObject({ reason: expect.stringMatching(/^401 /) });
    expect(fake.stats.requests).toBe(1);
    fake.knobs.faults = [{ match: /^POST \/batch\/calendar\/v3$/, status: 503, limit: 1 }];
    fake.resetStats();
    expect((await applyBatched(c, [create(cal, 1), create(cal, 2)])).map(outcome)).toEqual(['ok', 'ok']);
    expect(fake.stats.requests).toBe(2);
    fake.knobs.faults = [];
  });
});
