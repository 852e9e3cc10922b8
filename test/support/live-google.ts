// The Google fake seen as a test of live (public) Google calendars reads it: a target's settings against the fake,
// the calendars of a team by their ownership marker and generation, who may read them, what they hold.
import { markerGeneration } from '../../src/push/stable-ids.ts';
import type { FakeGoogle, FakeGoogleCalendar } from '../fakes/google-calendar.ts';

/** A Google target's `google` settings for the fake (the token from GOOGLE_TOKEN), with short retries. */
export function fakeGoogleSettings(fake: FakeGoogle) {
  return {
    rootUrl: fake.url,
    auth: { accessToken: 'env:GOOGLE_TOKEN' },
    writesPerSecond: 2000,
    backoff: { baseMs: 5, capMs: 40, maxRetries: 6 },
  };
}

/** Every calendar the fake holds for a team of a school's target, with its generation. */
export function teamCalendars(
  fake: FakeGoogle,
  school: string,
  target: string,
  team: number,
): (FakeGoogleCalendar & { gen: number })[] {
  return fake
    .calendars()
    .map((c) => ({ ...c, gen: markerGeneration(c.description, school, target, `team:${team}`) }))
    .filter((c): c is FakeGoogleCalendar & { gen: number } => c.gen !== null);
}

/** Anyone may read it: the `default` reader rule families add it by. */
export const isPublic = (c: FakeGoogleCalendar) => c.acl.some((r) => r.id === 'default');

/** The sessions a calendar's live events stand for (one entry per event), sorted. */
export function sessionsOf(fake: FakeGoogle, id: string): string[] {
  return fake
    .liveEvents(id)
    .map((e) => e.extendedProperties?.private?.rostercalSession ?? '?')
    .sort();
}

/**
 * Targets as a school configures them: `live`, the given teams' public calendars, and `coaches`, staff calendars in
 * the same Google account, which are never public whatever is rotated.
 */
export function liveTargets(fake: FakeGoogle, teams: number[]): Record<string, unknown>[] {
  const google = fakeGoogleSettings(fake);
  return [
    {
      id: 'live',
      provider: 'google',
      scope: 'team',
      ids: teams,
      google: { ...google, calendars: { familiesMayAdd: true } },
    },
    { id: 'coaches', provider: 'google', scope: 'staff', google },
  ];
}

/** A plain Google target of the school's team calendars at `rootUrl` (a fake, or a server that answers errors). */
export function googleTeamTarget(rootUrl: string): Record<string, unknown> {
  return {
    id: 'teams',
    provider: 'google',
    scope: 'team',
    google: { rootUrl, auth: { accessToken: 'env:GOOGLE_TOKEN' } },
  };
}
