// Writing events to Outlook, each its own request (GraphBatcher packs them into $batch round trips). A create
// carries a transactionId derived from the event's identity, so a retried or repeated create never duplicates;
// an update of an event deleted by hand creates it again; a delete answered 404 is done. A mailbox found unusable
// gets nothing more.
import type { WriteOp, WriteResult } from '../provider.ts';
import { graphTransactionId } from '../stable-ids.ts';
import { describe, isItemGone, type OutlookClients } from './clients.ts';

export function applyOutlookWrites(c: OutlookClients, ops: WriteOp[]): Promise<WriteResult[]> {
  return Promise.all(ops.map((op) => applyOne(c, op)));
}

async function create(
  c: OutlookClients,
  op: WriteOp & { kind: 'create' | 'update' },
  mailbox: string,
  generation: string,
): Promise<WriteResult> {
  const r = await c.call(mailbox, {
    method: 'POST',
    url: `${c.user(mailbox)}/calendars/${encodeURIComponent(op.calendar.remoteCalendarId)}/events`,
    body: { ...(op.rendered.body as object), transactionId: graphTransactionId(op.identity, generation) },
  });
  if (r.status === 201 || r.status === 200) return { ok: true, remoteEventId: String(r.body.id) };
  if (isItemGone(r))
    return { ok: false, kind: 'calendar-gone', reason: `calendar not found: ${describe(r)}` };
  return c.failure(r, mailbox);
}

async function applyOne(c: OutlookClients, op: WriteOp): Promise<WriteResult> {
  const mailbox = op.calendar.owner;
  if (!mailbox) return { ok: false, kind: 'account', reason: 'no mailbox' };
  const bad = c.badMailboxes.get(mailbox);
  if (bad) return { ok: false, kind: 'account', reason: bad };
  const eventUrl = (id: string) => `${c.user(mailbox)}/events/${encodeURIComponent(id)}`;
  switch (op.kind) {
    case 'create':
      return create(c, op, mailbox, op.generation ?? '');
    case 'update': {
      const r = await c.call(mailbox, {
        method: 'PATCH',
        url: eventUrl(op.remoteEventId),
        body: op.rendered.body,
      });
      if (r.status === 200) return { ok: true, remoteEventId: op.remoteEventId };
      if (isItemGone(r)) {
        // Deleted by hand: create it again, under a transactionId of its own.
        const created = await create(c, op, mailbox, op.remoteEventId);
        return created.ok ? { ...created, recreated: true } : created;
      }
      return c.failure(r, mailbox);
    }
    case 'delete': {
      const r = await c.call(mailbox, { method: 'DELETE', url: eventUrl(op.remoteEventId) });
      if (r.status === 204 || r.status === 200 || isItemGone(r)) return { ok: true, remoteEventId: null };
      return c.failure(r, mailbox);
    }
  }
}
