// push/outlook/listing.ts through the real Graph client against the fake Graph over TLS: only this target's events
// (filtered on the ownership property), with session, hash and times read from the expanded properties, every
// page followed by its nextLink; a calendar deleted by hand is calendar-gone, an unusable mailbox an account
// failure, anything else an error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OutlookClients } from '../../../src/push/outlook/clients.ts';
import { listOutlookCalendar } from '../../../src/push/outlook/listing.ts';
import { applyOutlookWrites } from '../../../src/push/outlook/writes.ts';
import { ownerTag } from '../../../src/push/stable-ids.ts';
import type { FakeGraph } from '../../fakes/graph.ts';
import { ANN, BO, create, newCalendar, OWNER, outlookOnFake, UNLICENSED } from './on-fake.ts';

let fake: FakeGraph;
let c: OutlookClients;
beforeAll(async () => {
  ({ fake, clients: c } = await outlookOnFake());
});
afterAll(() => fake?.close());

describe('listing an Outlook calendar', () => {
  it("reads this target's events only, with session, hash and times", async () => {
    const cal = await newCalendar(c, ANN, 'staff:1');
    const ops = [create(cal, 1), create(cal, 2)];
    const written = await applyOutlookWrites(c, ops);
    // Another target's event in the same calendar.
    await c.call(ANN, {
      method: 'POST',
      url: `${c.user(ANN)}/calendars/${cal.remoteCalendarId}/events`,
      body: {
        ...(ops[0]!.rendered.body as object),
        singleValueExtendedProperties: (
          ops[0]!.rendered.body as { singleValueExtendedProperties: { id: string; value: string }[] }
        ).singleValueExtendedProperties.map((p, i) =>
          i === 0 ? { ...p, value: ownerTag('hill', 'other') } : p,
        ),
      },
    });
    const r = await listOutlookCalendar(c, OWNER, cal);
    // Graph orders events of the same start by id: here by session.
    if (r.ok) r.events.sort((x, y) => (x.sessionId ?? 0) - (y.sessionId ?? 0));
    expect(r).toEqual({
      ok: true,
      events: [0, 1].map((i) => ({
        remoteEventId: written[i]!.ok ? written[i]!.remoteEventId : null,
        calendarKey: 'staff:1',
        sessionId: i + 1,
        hash: ops[i]!.rendered.hash,
        start: '2026-12-01T16:00:00.000Z',
        end: '2026-12-01T17:00:00.000Z',
        live: true,
      })),
    });
  });

  it('follows every nextLink (500 events a page)', async () => {
    const cal = await newCalendar(c, BO, 'staff:2');
    const n = 520;
    const written = await applyOutlookWrites(
      c,
      Array.from({ length: n }, (_, i) => create(cal, i + 1)),
    );
    expect(written.every((w) => w.ok)).toBe(true);
    fake.resetStats();
    const r = await listOutlookCalendar(c, OWNER, cal);
    expect(r.ok && new Set(r.events.map((e) => e.sessionId)).size).toBe(n);
    expect(fake.stats.byOperation['GET events.list']).toBe(2);
  });

  it('a calendar deleted by hand is calendar-gone, an unusable mailbox account, a refusal an error', async () => {
    const gone = await newCalendar(c, ANN, 'staff:3');
    await c.call(ANN, { method: 'DELETE', url: `${c.user(ANN)}/calendars/${gone.remoteCalendarId}` });
    const kind = async (cal: typeof gone) => {
      const r = await listOutlookCalendar(c, OWNER, cal);
      return r.ok ? 'ok' : r.kind;
    };
    expect(await kind(gone)).toBe('calendar-gone');
    expect(await kind({ ...gone, owner: UNLICENSED })).toBe('account');
    expect(await listOutlookCalendar(c, OWNER, { ...gone, owner: null })).toEqual({
      ok: false,
      kind: 'account',
      reason: 'no mailbox',
    });
    const cal = await newCalendar(c, ANN, 'staff:4');
    fake.knobs.faults = [{ match: /^GET .*\/events$/, status: 403, limit: 1 }];
    try {
      expect(await kind(cal)).toBe('error');
    } finally {
      fake.knobs.faults = [];
    }
  });
});
