// Which Google calendar a family may add for a feed: the one a Google target with `calendars.familiesMayAdd`
// keeps for that team or activity (public read ACL). Google refreshes a subscribed feed only every 12–24 hours;
// a calendar written through the API shows changes within minutes, so the landing page offers it instead.

import type { PushTargetConfig } from '../config/push-targets.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store } from '../store/types.ts';
import { decodeCalendarId } from './calendar-id.ts';
import { publicTargetsFor } from './live-rotation.ts';

export type LiveGoogleCalendarFinder = (
  schoolId: SchoolId,
  scope: FeedScope,
  scopeId: Id,
) => Promise<string | null>;

export function liveGoogleCalendars(
  store: Pick<Store, 'push'>,
  schools: readonly { id: SchoolId; targets: readonly PushTargetConfig[] }[],
): LiveGoogleCalendarFinder {
  return async (schoolId, scope, scopeId) => {
    const school = schools.find((s) => s.id === schoolId);
    for (const t of publicTargetsFor(school?.targets ?? [], scope, scopeId)) {
      const cal = (await store.push.listPushCalendars(schoolId, t.id)).find(
        (c) => c.calendarKey === `${scope}:${scopeId}`,
      );
      // Created (and made readable) by a push run; until then (and after a rotation) there is nothing to add.
      if (cal?.remoteCalendarId) return decodeCalendarId(cal.remoteCalendarId).id;
    }
    return null;
  };
}
