// push/google/listing.ts through the real Calendar client against the fake Google over HTTP: only this target's
// events in the window (by the ownership tag), cancelled ones kept as not live, every page read; a calendar
// deleted by hand, a spent quota and a refusal each said as the run acts on them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBatched } from '../../../src/push/google/batch.ts';
import type { GoogleClients } from '../../../src/push/google/clients.ts';
import { listGoogleCalendar } from '../../../src/push/google/listing.ts';
import { ownerTag } from '../../../src/push/stable-ids.ts';
import type { FakeGoogle } from '../../fakes/google-calendar.ts';
import { create, googleOnFake, newCalendar, OWNER, remove } from './on-fake.ts';

const WINDOW = { from: '2026-11-01T00:00:00.000Z', to: '2027-01-01T00:00:00.000Z' };

let fake: FakeGoogle;
let c: GoogleClients;
beforeAll(async () => {
  ({ fake, clients: c } = await googleOnFake({ batchSize: 50 }));
});
afterAll(() => fake?.close());

describe('listing a Google calendar', () => {
  it("reads this target's events in the window, a deleted one as not live, with session, hash and times", async () => {
    const cal = await newCalendar(c, 'team:1');
    const [a, b] = [create(cal, 1), create(cal, 2)];
    const written = await applyBatched(c, [a, b]);
    const ids = written.map((w) => (w.ok ? w.remoteEventId : null));
    await applyBatched(c, [remove(cal, 2, ids[1]!)]);
    // Another target's event in the same calendar, and one of ours outside the window.
    await c.call('', true, (api) =>
      api.events.insert({
        calendarId: cal.remoteCalendarId,
        requestBody: {
          ...(a.rendered.body as object),
          extendedProperties: { private: { rostercal: ownerTag('hill', 'other') } },
        },
      }),
    );
    const r = await listGoogleCalendar(c, OWNER, cal, { ...WINDOW, to: '2026-12-01T16:00:00.000Z' });
    expect(r).toEqual({ ok: true, events: [] });
    const listed = await listGoogleCalendar(c, OWNER, cal, WINDOW);
    expect(listed).toEqual({
      ok: true,
      events: [1, 2].map((s, i) => ({
        remoteEventId: ids[i],
        calendarKey: 'team:1',
        sessionId: s,
        hash: [a, b][i]!.rendered.hash,
        start: '2026-12-01T16:00:00.000Z',
        end: '2026-12-01T17:00:00.000Z',
        live: s === 1,
      })),
    });
  });

  it('reads every page (2,500 events a page)', async () => {
    const cal = await newCalendar(c, 'team:2');
    const n = 2_600;
    const written = await applyBatched(
      c,
      Array.from({ length: n }, (_, i) => create(cal, i + 1)),
    );
    expect(written.every((w) => w.ok)).toBe(true);
    fake.resetStats();
    const r = await listGoogleCalendar(c, OWNER, cal, WINDOW);
    expect(r.ok && new Set(r.events.map((e) => e.sessionId)).size).toBe(n);
    expect(fake.stats.byOperation['GET events.list']).toBe(2);
  });

  it('a calendar deleted by hand is calendar-gone, a spent quota quota, a refusal an error', async () => {
    const [gone, spent, refused] = [
      await newCalendar(c, 'team:3'),
      await newCalendar(c, 'team:4'),
      await newCalendar(c, 'team:5'),
    ];
    fake.deleteCalendar(gone.remoteCalendarId);
    fake.knobs.quotaExceeded.add(spent.remoteCalendarId);
    const said = async (cal: typeof gone) => {
      const r = await listGoogleCalendar(c, OWNER, cal, WINDOW);
      return r.ok ? 'ok' : `${r.kind}: ${r.reason}`;
    };
    try {
      expect(await said(gone)).toBe('calendar-gone: calendar not found: 404 notFound Not Found');
      expect(await said(spent)).toBe(
        'quota: quota exceeded: 403 quotaExceeded Calendar usage limits exceeded.',
      );
      fake.knobs.faults = [{ match: /^GET .*\/events$/, status: 403, limit: 1 }];
      expect(await said(refused)).toBe(
        'error: 403 insufficientPermissions Request had insufficient authentication scopes.',
      );
    } finally {
      fake.knobs.quotaExceeded.delete(spent.remoteCalendarId);
      fake.knobs.faults = [];
    }
  });
});
