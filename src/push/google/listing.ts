// Listing our events in a Google calendar: filtered by the target's ownership tag, cancelled ones included
// (a deleted event lingers as `cancelled` and its id stays taken).
import type { Instant } from '../../domain/types.ts';
import type { CalendarRef, ListResult, RemoteEvent } from '../provider.ts';
import { failureOf, type GoogleClients, isAccountProblem, PausedError } from './clients.ts';
import { OWNER_KEY, remoteEventOf } from './render.ts';

export async function listGoogleCalendar(
  c: GoogleClients,
  owner: string,
  cal: CalendarRef,
  window: { from: Instant; to: Instant },
): Promise<ListResult> {
  const account = c.account(cal.owner);
  const events: RemoteEvent[] = [];
  try {
    let pageToken: string | undefined;
    do {
      const res = await c.call(account, false, (api) =>
        api.events.list({
          calendarId: cal.remoteCalendarId,
          privateExtendedProperty: [`${OWNER_KEY}=${owner}`],
          timeMin: window.from,
          timeMax: window.to,
          showDeleted: true,
          maxResults: 2500,
          ...(pageToken ? { pageToken } : {}),
        }),
      );
      for (const e of res.data.items ?? []) {
        const r = remoteEventOf(e);
        if (r) events.push(r);
      }
      pageToken = res.data.nextPageToken ?? undefined;
    } while (pageToken);
    return { ok: true, events };
  } catch (err) {
    if (err instanceof PausedError)
      return { ok: false, kind: 'quota', reason: `quota exceeded: ${err.message}` };
    const f = failureOf(err);
    if (f.status === 404)
      return { ok: false, kind: 'calendar-gone', reason: `calendar not found: ${f.message}` };
    return { ok: false, kind: isAccountProblem(err) ? 'account' : 'error', reason: f.message };
  }
}
