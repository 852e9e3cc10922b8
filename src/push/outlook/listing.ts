// Listing our events in an Outlook calendar: filtered by the target's ownership property, with the session and
// hash properties expanded, page by page (`@odata.nextLink`).
import type { CalendarRef, ListResult, RemoteEvent } from '../provider.ts';
import { describe, isItemGone, isMailboxProblem, type OutlookClients, odataString } from './clients.ts';
import { HASH_PROP, OWNER_PROP, remoteEventOf, SESSION_PROP } from './render.ts';

export async function listOutlookCalendar(
  c: OutlookClients,
  owner: string,
  cal: CalendarRef,
): Promise<ListResult> {
  const mailbox = cal.owner;
  if (!mailbox) return { ok: false, kind: 'account', reason: 'no mailbox' };
  const filter = `singleValueExtendedProperties/Any(ep: ep/id eq ${odataString(OWNER_PROP)} and ep/value eq ${odataString(owner)})`;
  const expand = `singleValueExtendedProperties($filter=id eq ${odataString(SESSION_PROP)} or id eq ${odataString(HASH_PROP)})`;
  let url: string | null =
    `${c.user(mailbox)}/calendars/${encodeURIComponent(cal.remoteCalendarId)}/events?` +
    `$filter=${encodeURIComponent(filter)}&$expand=${encodeURIComponent(expand)}&$select=id,start,end&$top=500`;
  const events: RemoteEvent[] = [];
  while (url) {
    const r = await c.call(mailbox, { method: 'GET', url });
    if (r.status !== 200) {
      if (isItemGone(r))
        return { ok: false, kind: 'calendar-gone', reason: `calendar not found: ${describe(r)}` };
      return { ok: false, kind: isMailboxProblem(r) ? 'account' : 'error', reason: describe(r) };
    }
    for (const e of r.body?.value ?? []) events.push(remoteEventOf(e));
    const next = r.body?.['@odata.nextLink'];
    url = typeof next === 'string' ? c.relative(next) : null;
  }
  return { ok: true, events };
}
