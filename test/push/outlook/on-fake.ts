// What a test of one module of push/outlook/ needs: the fake Graph over TLS (trusted by this process), the real
// clients (Graph SDK, its middleware, the $batch scheduler) for a staff target on it, and the writes a plan would
// hand over.
import { type OutlookSettings, parseTargets } from '../../../src/config/push-targets.ts';
import { OutlookClients } from '../../../src/push/outlook/clients.ts';
import { renderOutlookEvent } from '../../../src/push/outlook/render.ts';
import type { CalendarRef } from '../../../src/push/provider.ts';
import { type FakeGraph, type FakeGraphOptions, startFakeGraph } from '../../fakes/graph.ts';
import { trustCertificate } from '../../fakes/tls.ts';
import { writeOps } from '../write-ops.ts';

export const TARGET = 'coaches';
export const { owner: OWNER, identity, create, update, remove } = writeOps(TARGET, renderOutlookEvent);
export const ANN = 'ann@hill.example';
export const BO = 'bo@hill.example';
/** A mailbox without an Exchange licence. */
export const UNLICENSED = 'cy@hill.example';

/** A staff target's settings on the fake: a static token and fast backoff, unless `over` says otherwise. */
export function settingsOn(fake: FakeGraph, over: Record<string, unknown> = {}): OutlookSettings {
  const t = parseTargets(
    [
      {
        id: TARGET,
        provider: 'outlook',
        scope: 'staff',
        outlook: {
          baseUrl: fake.url,
          authorityHost: fake.authorityHost,
          accessToken: fake.token,
          backoff: { baseMs: 5, capMs: 50, maxRetries: 3 },
          ...over,
        },
      },
    ],
    'targets',
  )[0]!;
  if (t.provider !== 'outlook') throw new Error('not an Outlook target');
  return t.outlook;
}

export async function graphFake(opts: FakeGraphOptions = {}): Promise<FakeGraph> {
  const fake = await startFakeGraph({ mailboxes: [ANN, BO], unlicensedMailboxes: [UNLICENSED], ...opts });
  trustCertificate(fake.cert);
  return fake;
}

export async function outlookOnFake(
  over: Record<string, unknown> = {},
  opts: FakeGraphOptions = {},
): Promise<{ fake: FakeGraph; clients: OutlookClients }> {
  const fake = await graphFake(opts);
  return { fake, clients: new OutlookClients(settingsOn(fake, over)) };
}

/** A calendar made in `mailbox` through the real client, as the ensure stage would have. */
export async function newCalendar(c: OutlookClients, mailbox: string, key: string): Promise<CalendarRef> {
  const r = await c.call(mailbox, {
    method: 'POST',
    url: `${c.user(mailbox)}/calendars`,
    body: { name: key },
  });
  if (r.status !== 201) throw new Error(`the fake did not make ${key}: ${r.status}`);
  return { key, remoteCalendarId: String(r.body.id), owner: mailbox };
}
