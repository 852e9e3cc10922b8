// What a test of one module of push/google/ needs: the fake Google over HTTP, the real clients (the Calendar
// client, pacing and backoff) for a team target on it, and the writes a plan would hand over.
import type { GoogleSettings } from '../../../src/config/push-targets.ts';
import { GoogleClients } from '../../../src/push/google/clients.ts';
import { renderGoogleEvent } from '../../../src/push/google/render.ts';
import type { CalendarRef } from '../../../src/push/provider.ts';
import { type FakeGoogle, type FakeGoogleOptions, startFakeGoogle } from '../../fakes/google-calendar.ts';
import { googleTeamTarget } from '../google-stage.ts';
import { TARGET } from '../stage-calendars.ts';
import { writeOps } from '../write-ops.ts';

export { SCHOOL, TARGET } from '../stage-calendars.ts';
export const { owner: OWNER, identity, create, update, remove } = writeOps(TARGET, renderGoogleEvent);

/** A Google target's settings on the fake: fast backoff, unpaced writes, unless `over` says otherwise. */
export function settingsOn(fake: FakeGoogle, over: Record<string, unknown> = {}): GoogleSettings {
  const t = googleTeamTarget(fake, {}, { writesPerSecond: 10_000, ...over });
  if (t.provider !== 'google') throw new Error('not a Google target');
  return t.google;
}

export async function googleOnFake(
  over: Record<string, unknown> = {},
  opts: FakeGoogleOptions = {},
): Promise<{ fake: FakeGoogle; clients: GoogleClients }> {
  const fake = await startFakeGoogle(opts);
  return { fake, clients: new GoogleClients(settingsOn(fake, over), false) };
}

/** A calendar made in the fake through the real client, as the ensure stage would have. */
export async function newCalendar(c: GoogleClients, key: string): Promise<CalendarRef> {
  const res = await c.call('', true, (api) => api.calendars.insert({ requestBody: { summary: key } }));
  return { key, remoteCalendarId: res.data.id!, owner: null };
}
