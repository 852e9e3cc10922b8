// Finding or creating a target's calendar in a mailbox: one known from an earlier run, else created (Graph refuses a
// second calendar of the same name, 409 ErrorFolderExists: then it is looked up). A dry run only looks.
import type { CalendarSpec, EnsureResult } from '../provider.ts';
import type { SubResponse } from './batch.ts';
import { describe, errorOf, type OutlookClients, odataString } from './clients.ts';

async function findCalendar(
  c: OutlookClients,
  mailbox: string,
  name: string,
): Promise<{ id: string | null; error: SubResponse | null }> {
  const r = await c.call(mailbox, {
    method: 'GET',
    url: `${c.user(mailbox)}/calendars?$filter=${encodeURIComponent(`name eq ${odataString(name)}`)}&$select=id,name`,
  });
  if (r.status !== 200) return { id: null, error: r };
  const found = (r.body?.value ?? []).find((x: { name?: string }) => x.name === name) ?? r.body?.value?.[0];
  return { id: found?.id ?? null, error: null };
}

export async function ensureOutlookCalendar(
  c: OutlookClients,
  spec: CalendarSpec,
  dryRun: boolean,
): Promise<EnsureResult> {
  const mailbox = spec.owner;
  if (!mailbox) return { ok: false, kind: 'account', reason: `${spec.key}: no mailbox` };
  if (spec.remoteCalendarId) return { ok: true, remoteCalendarId: spec.remoteCalendarId, created: false };
  const fail = (r: SubResponse): EnsureResult =>
    c.failure(r, mailbox, `${spec.key} mailbox ${mailbox}: ${describe(r)}`);
  if (dryRun) {
    const found = await findCalendar(c, mailbox, spec.name);
    if (found.error) return fail(found.error);
    return found.id
      ? { ok: true, remoteCalendarId: found.id, created: false }
      : { ok: true, remoteCalendarId: '', created: true };
  }
  // Create first: Graph refuses a second calendar of the same name (409 ErrorFolderExists), so this cannot
  // duplicate, and a new mailbox costs one request instead of a lookup and a create.
  const created = await c.call(mailbox, {
    method: 'POST',
    url: `${c.user(mailbox)}/calendars`,
    body: { name: spec.name },
  });
  if (created.status === 201 || created.status === 200) {
    return { ok: true, remoteCalendarId: String(created.body.id), created: true };
  }
  if (created.status === 409 && errorOf(created).code === 'ErrorFolderExists') {
    const found = await findCalendar(c, mailbox, spec.name);
    if (found.id) return { ok: true, remoteCalendarId: found.id, created: false };
    if (found.error) return fail(found.error);
  }
  return fail(created);
}
