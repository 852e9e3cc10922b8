// push/outlook/writes.ts through the real Graph client and $batch scheduler against the fake Graph over TLS: a
// create carries its identity's transactionId (a repeat while the event exists gives it back, no duplicate); an
// update of an event deleted by hand creates it again, a delete of one gone is done; a calendar deleted by hand is
// calendar-gone; a mailbox found unusable gets nothing more.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutlookClients } from '../../../src/push/outlook/clients.ts';
import { applyOutlookWrites } from '../../../src/push/outlook/writes.ts';
import { graphTransactionId } from '../../../src/push/stable-ids.ts';
import type { FakeGraph } from '../../fakes/graph.ts';
import {
  ANN,
  BO,
  create,
  identity,
  newCalendar,
  outlookOnFake,
  remove,
  UNLICENSED,
  update,
} from './on-fake.ts';

let fake: FakeGraph;
let c: OutlookClients;
beforeAll(async () => {
  ({ fake, clients: c } = await outlookOnFake());
});
afterAll(() => fake?.close());

const idOf = (r: { ok: boolean; remoteEventId?: string | null }) => (r.ok ? r.remoteEventId : null);

describe('Outlook writes', () => {
  it("a create carries its identity's transactionId: the same create again gives the same event back", async () => {
    const cal = await newCalendar(c, ANN, 'staff:1');
    const [first] = await applyOutlookWrites(c, [create(cal, 1)]);
    const [again] = await applyOutlookWrites(c, [create(cal, 1)]);
    expect(first).toEqual({ ok: true, remoteEventId: expect.any(String) });
    expect(again).toEqual(first);
    const events = fake.events(ANN, 'staff:1');
    expect(events.map((e) => [e.id, e.transactionId])).toEqual([
      [idOf(first!), graphTransactionId(identity('staff:1', 1))],
    ]);
  });

  it('an update changes the event; of one deleted by hand it creates it again; a delete of one gone is done', async () => {
    const cal = await newCalendar(c, ANN, 'staff:2');
    const [a, b] = await applyOutlookWrites(c, [create(cal, 1), create(cal, 2)]);
    expect(await applyOutlookWrites(c, [update(cal, 1, idOf(a!)!, 'Moved')])).toEqual([a]);
    await applyOutlookWrites(c, [remove(cal, 2, idOf(b!)!)]);
    const [back] = await applyOutlookWrites(c, [update(cal, 2, idOf(b!)!, 'Back')]);
    expect(back).toEqual({ ok: true, remoteEventId: expect.any(String), recreated: true });
    expect(idOf(back!)).not.toBe(idOf(b!));
    expect(
      fake
        .events(ANN, 'staff:2')
        .map((e) => e.subject)
        .sort(),
    ).toEqual(['Back', 'Moved']);
    expect(await applyOutlookWrites(c, [remove(cal, 2, idOf(b!)!)])).toEqual([
      { ok: true, remoteEventId: null },
    ]);
  });

  it('a calendar deleted by hand is calendar-gone', async () => {
    const cal = await newCalendar(c, BO, 'staff:3');
    await c.call(BO, { method: 'DELETE', url: `${c.user(BO)}/calendars/${cal.remoteCalendarId}` });
    const [r] = await applyOutlookWrites(c, [create(cal, 1)]);
    expect(r).toMatchObject({
      ok: false,
      kind: 'calendar-gone',
      reason: expect.stringMatching(/^calendar not found: 404 ErrorItemNotFound/),
    });
  });

  it('a mailbox found unusable fails as account, and its later writes are not sent; no mailbox is account', async () => {
    const cal = { key: 'staff:4', remoteCalendarId: 'AAkALgunknown', owner: UNLICENSED };
    const [first] = await applyOutlookWrites(c, [create(cal, 1)]);
    expect(first).toMatchObject({
      ok: false,
      kind: 'account',
      reason: expect.stringMatching(/MailboxNotEnabledForRESTAPI/),
    });
    const before = fake.stats.batchItems;
    const later = await applyOutlookWrites(c, [create(cal, 2), remove(cal, 3, 'x')]);
    expect(later).toEqual([
      { ok: false, kind: 'account', reason: first!.ok ? '' : first!.reason },
      { ok: false, kind: 'account', reason: first!.ok ? '' : first!.reason },
    ]);
    expect(fake.stats.batchItems).toBe(before);
    expect(await applyOutlookWrites(c, [create({ ...cal, owner: null }, 5)])).toEqual([
      { ok: false, kind: 'account', reason: 'no mailbox' },
    ]);
  });
});
