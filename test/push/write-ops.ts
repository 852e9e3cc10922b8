// The writes a plan hands a provider, built by hand for a test of one provider module: session `sessionId` as the
// projection would give it (1 December 2026, 16:00 UTC for an hour), rendered by that provider for target `target`.
import type { CalendarEvent } from '../../src/calendar/types.ts';
import type { CalendarRef, Rendered, WriteOp } from '../../src/push/provider.ts';
import { type EventIdentity, ownerTag } from '../../src/push/stable-ids.ts';
import { SCHOOL } from './stage-calendars.ts';

type Render = (ev: CalendarEvent, identity: EventIdentity, owner: string) => Rendered;

export function writeOps(target: string, render: Render) {
  const owner = ownerTag(SCHOOL, target);
  const identity = (calendarKey: string, sessionId: number): EventIdentity => ({
    schoolId: SCHOOL,
    target,
    calendarKey,
    sessionId,
  });
  const rendered = (calendarKey: string, sessionId: number, title = `Practice ${sessionId}`) =>
    render(
      {
        sessionId,
        uid: `session-${sessionId}@hill.rostercal`,
        sequence: 0,
        lastModified: '2026-11-01T08:00:00.000Z',
        start: '2026-12-01T16:00:00.000Z',
        end: '2026-12-01T17:00:00.000Z',
        timeZone: 'Europe/London',
        title,
        description: '',
        status: 'confirmed',
        location: null,
        color: null,
        categories: [],
      },
      identity(calendarKey, sessionId),
      owner,
    );
  const create = (
    cal: CalendarRef,
    sessionId: number,
    title?: string,
  ): Extract<WriteOp, { kind: 'create' }> => ({
    kind: 'create',
    calendar: cal,
    identity: identity(cal.key, sessionId),
    rendered: rendered(cal.key, sessionId, title),
    remoteEventId: null,
  });
  const update = (cal: CalendarRef, sessionId: number, remoteEventId: string, title?: string): WriteOp => ({
    kind: 'update',
    calendar: cal,
    identity: identity(cal.key, sessionId),
    rendered: rendered(cal.key, sessionId, title),
    remoteEventId,
  });
  const remove = (cal: CalendarRef, sessionId: number, remoteEventId: string): WriteOp => ({
    kind: 'delete',
    calendar: cal,
    identity: identity(cal.key, sessionId),
    remoteEventId,
  });
  return { owner, identity, create, update, remove };
}
