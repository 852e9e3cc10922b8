// Writing events one request at a time (batchSize 1): calendars in parallel up to `concurrency`, each
// calendar's writes in order. Event ids are ours (deterministic base32hex), so a create that finds the id taken
// (409: a lost mapping, a crash after the insert, or a deleted event lingering as `cancelled`) adopts it with a
// full update, which also sets it back to confirmed. A delete answered 404/410 is done.
import type { calendar_v3 } from '@googleapis/calendar';
import { mapLimit } from '../../util/concurrency.ts';
import type { WriteOp, WriteResult } from '../provider.ts';
import { googleEventId } from '../stable-ids.ts';
import { failureOf, type GoogleClients, isAccountProblem, PausedError } from './clients.ts';

export async function applyOneByOne(c: GoogleClients, ops: WriteOp[]): Promise<WriteResult[]> {
  const results = new Array<WriteResult>(ops.length);
  const byCalendar = new Map<string, number[]>();
  ops.forEach((op, i) => {
    const list = byCalendar.get(op.calendar.key) ?? [];
    list.push(i);
    byCalendar.set(op.calendar.key, list);
  });
  await mapLimit([...byCalendar.values()], c.settings.concurrency, async (indexes) => {
    let paused: string | null = null;
    for (const i of indexes) {
      const op = ops[i]!;
      if (paused) {
        results[i] = { ok: false, kind: 'quota', reason: paused };
        continue;
      }
      try {
        results[i] = await applyOne(c, op);
      } catch (err) {
        if (err instanceof PausedError) {
          paused = `quota exceeded: ${err.message}`;
          results[i] = { ok: false, kind: 'quota', reason: paused };
        } else {
          const kind = isAccountProblem(err) ? 'account' : 'error';
          results[i] = { ok: false, kind, reason: failureOf(err).message };
        }
      }
    }
  });
  return results;
}

async function applyOne(c: GoogleClients, op: WriteOp): Promise<WriteResult> {
  const account = c.account(op.calendar.owner);
  const calendarId = op.calendar.remoteCalendarId;
  switch (op.kind) {
    case 'create':
      return insert(c, account, calendarId, op.remoteEventId ?? googleEventId(op.identity), op.rendered.body);
    case 'update':
      try {
        await put(c, account, calendarId, op.remoteEventId, op.rendered.body);
        return { ok: true, remoteEventId: op.remoteEventId };
      } catch (err) {
        const s = failureOf(err).status;
        if (s !== 404 && s !== 410) throw err;
        const r = await insert(c, account, calendarId, op.remoteEventId, op.rendered.body);
        return r.ok ? { ...r, recreated: true } : r;
      }
    case 'delete':
      try {
        await c.call(account, true, (api) =>
          api.events.delete({ calendarId, eventId: op.remoteEventId, sendUpdates: 'none' }),
        );
      } catch (err) {
        const s = failureOf(err).status;
        if (s !== 404 && s !== 410) throw err;
      }
      return { ok: true, remoteEventId: null };
  }
}

function put(c: GoogleClients, account: string, calendarId: string, eventId: string, body: unknown) {
  return c.call(account, true, (api) =>
    api.events.update({
      calendarId,
      eventId,
      sendUpdates: 'none',
      requestBody: body as calendar_v3.Schema$Event,
    }),
  );
}

async function insert(
  c: GoogleClients,
  account: string,
  calendarId: string,
  eventId: string,
  body: unknown,
): Promise<WriteResult> {
  try {
    await c.call(account, true, (api) =>
      api.events.insert({
        calendarId,
        sendUpdates: 'none',
        requestBody: { ...(body as calendar_v3.Schema$Event), id: eventId },
      }),
    );
    return { ok: true, remoteEventId: eventId };
  } catch (err) {
    const status = failureOf(err).status;
    // Inserting into a calendar answers 404 only when the calendar itself is gone.
    if (status === 404)
      return { ok: false, kind: 'calendar-gone', reason: 'calendar not found (deleted in Google?)' };
    // 409: the id exists (perhaps as a cancelled event): adopt it, and the update makes it confirmed again.
    if (status !== 409) throw err;
    await put(c, account, calendarId, eventId, body);
    return { ok: true, remoteEventId: eventId, adopted: true };
  }
}
