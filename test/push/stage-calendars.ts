// A calendar as the push stages hand it on, built by hand for a test of one stage: what the stages before it would
// have made (gather, ensure, list, look up departed), with only the fields the test cares about set.
import type { Id } from '../../src/domain/types.ts';
import type { Examined } from '../../src/push/departed.ts';
import { emptyCounts } from '../../src/push/gather.ts';
import type { Desired } from '../../src/push/plan.ts';
import type { CalendarSpec } from '../../src/push/provider.ts';
import type { PushMapping } from '../../src/store/types.ts';

export const SCHOOL = 'hill';
export const TARGET = 'teams';

export function spec(key: string, over: Partial<CalendarSpec> = {}): CalendarSpec {
  return {
    key,
    name: `Calendar ${key}`,
    description: `rostercal ${key}`,
    marker: `rostercal:${key}`,
    timeZone: 'Europe/London',
    owner: null,
    memberEmail: null,
    remoteCalendarId: null,
    ...over,
  };
}

/** Events the calendar should show: these stages read only which sessions they are, never the events. */
export function desired(...sessionIds: Id[]): Map<Id, Desired> {
  return new Map(sessionIds.map((id) => [id, { sessionId: id } as Desired]));
}

export function mapping(key: string, sessionId: Id, contentHash = `h${sessionId}`): PushMapping {
  return {
    schoolId: SCHOOL,
    target: TARGET,
    calendarKey: key,
    sessionId,
    remoteEventId: `ev${sessionId}`,
    contentHash,
    updatedAt: '2026-11-01T08:00:00.000Z',
  };
}

export function mappings(key: string, ...sessionIds: Id[]): Map<Id, PushMapping> {
  return new Map(sessionIds.map((id) => [id, mapping(key, id)]));
}

/** A calendar in state `ok` with nothing desired, mapped, listed or departed, unless `over` says otherwise. */
export function stageCalendar(key: string, over: Partial<Examined> = {}): Examined {
  return {
    spec: spec(key),
    stored: null,
    outcome: {
      key,
      name: `Calendar ${key}`,
      remoteCalendarId: null,
      state: 'ok',
      reconciled: false,
      untrusted: false,
      counts: emptyCounts(),
    },
    desired: new Map(),
    mappings: new Map(),
    ref: null,
    fresh: false,
    retire: [],
    listing: null,
    departed: new Map(),
    ...over,
  };
}
