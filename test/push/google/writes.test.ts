// push/google/writes.ts (batchSize 1: one request per write), through the real Calendar client against the fake
// Google over HTTP: stable ids make a repeated create an adoption, an update of a vanished event a re-creation,
// a delete of a gone event done; quotaExceeded rests the calendar, other errors fail the write alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleClients } from '../../../src/push/google/clients.ts';
import { applyOneByOne } from '../../../src/push/google/writes.ts';
import { googleEventId } from '../../../src/push/stable-ids.ts';
import type { FakeGoogle } from '../../fakes/google-calendar.ts';
import { create, googleOnFake, identity, newCalendar, remove, update } from './on-fake.ts';

let fake: FakeGoogle;
let c: GoogleClients;
beforeAll(async () => {
  ({ fake, clients: c } = await googleOnFake({ batchSize: 1 }));
});
afterAll(() => fake?.close());

describe('Google writes one by one', () => {
  it('creates under the stable id; the same create again finds the id taken (409) and adopts it, no duplicate', async () => {
    const cal = await newCalendar(c, 'team:1');
    const id = googleEventId(identity('team:1', 1));
    expect(await applyOneByOne(c, [create(cal, 1)])).toEqual([{ ok: true, remoteEventId: id }]);
    expect(await applyOneByOne(c, [create(cal, 1, 'Practice moved')])).toEqual([
      { ok: true, remoteEventId: id, adopted: true },
    ]);
    expect(fake.liveEvents(cal.remoteCalendarId).map((e) => [e.id, e.summary])).toEqual([
      [id, 'Practice moved'],
    ]);
  });

  it('a create of a deleted (cancelled) event adopts it and makes it live again', async () => {
    const cal = await newCalendar(c, 'team:2');
    const id = googleEventId(identity('team:2', 2));
    await applyOneByOne(c, [create(cal, 2), remove(cal, 2, id)]);
    expect(fake.liveEvents(cal.remoteCalendarId)).toEqual([]);
    expect(await applyOneByOne(c, [create(cal, 2)])).toEqual([
      { ok: true, remoteEventId: id, adopted: true },
    ]);
    expect(fake.liveEvents(cal.remoteCalendarId).map((e) => e.status)).toEqual(['confirmed']);
  });

  it('an update of an event gone (404) creates it again; a delete of one gone (404, 410) is done', async () => {
    const cal = await newCalendar(c, 'team:3');
    const id = googleEventId(identity('team:3', 3));
    expect(await applyOneByOne(c, [update(cal, 3, id)])).toEqual([
      { ok: true, remoteEventId: id, recreated: true },
    ]);
    expect(fake.liveEvents(cal.remoteCalendarId).map((e) => e.id)).toEqual([id]);
    const gone = { ok: true, remoteEventId: null };
    // Deleted once (200), then again (410: cancelled), then an id never written (404).
    expect(
      await applyOneByOne(c, [remove(cal, 3, id), remove(cal, 3, id), remove(cal, 4, 'neverwritten00')]),
    ).toEqual([gone, gone, gone]);
  });

  it('a calendar deleted by hand answers calendar-gone', async () => {
    const cal = await newCalendar(c, 'team:5');
    fake.deleteCalendar(cal.remoteCalendarId);
    expect(await applyOneByOne(c, [create(cal, 5)])).toEqual([
      { ok: false, kind: 'calendar-gone', reason: 'calendar not found (deleted in Google?)' },
    ]);
  });

  it('quotaExceeded rests the calendar: its later writes are not sent; another calendar goes on', async () => {
    const [spent, other] = [await newCalendar(c, 'team:6'), await newCalendar(c, 'team:7')];
    fake.knobs.quotaExceeded.add(spent.remoteCalendarId);
    const before = c.stats.requests;
    try {
      const r = await applyOneByOne(c, [create(spent, 6), create(spent, 7), create(other, 8)]);
      expect(r.map((x) => (x.ok ? 'ok' : x.kind))).toEqual(['quota', 'quota', 'ok']);
      expect(r[1]).toEqual(r[0]);
      // One request to each calendar: the spent one is not asked again, nor retried.
      expect(c.stats.requests - before).toBe(2);
    } finally {
      fake.knobs.quotaExceeded.delete(spent.remoteCalendarId);
    }
  });

  it('a refusal (403 insufficientPermissions) fails that write alone, without retrying; a 429 is retried', async () => {
    const cal = await newCalendar(c, 'team:9');
    fake.knobs.faults.push({ match: /^POST .*\/events$/, status: 403, limit: 1 });
    fake.resetStats();
    const r = await applyOneByOne(c, [create(cal, 9), create(cal, 10)]);
    expect(r[0]).toMatchObject({ ok: false, kind: 'error', reason: expect.stringMatching(/^403 /) });
    expect(r[1]).toMatchObject({ ok: true });
    expect(fake.stats.byOperation['POST events.insert']).toBe(1);
    fake.knobs.faults = [{ match: /^POST .*\/events$/, status: 429, limit: 2 }];
    expect(await applyOneByOne(c, [create(cal, 11)])).toMatchObject([{ ok: true }]);
    expect(c.stats.throttled).toBe(2);
    fake.knobs.faults = [];
  });
});
