// A calendar whose provider said quota exceeded rests for pauseMinutes: the next runs skip it until then.
import { encodeCalendarId } from './calendar-id.ts';
import type { PushContext } from './context.ts';
import type { Ensured } from './ensure.ts';

/** Records the rest; returns the note saying until when, or null for a calendar with no remote id to rest. */
export async function pauseCalendar(
  ctx: Pick<PushContext, 'store' | 'schoolId' | 'targetId' | 'clock' | 'pauseMinutes'>,
  c: Pick<Ensured, 'spec' | 'ref' | 'stored'>,
): Promise<string | null> {
  if (!c.ref?.remoteCalendarId) return null;
  const until = new Date(ctx.clock().getTime() + ctx.pauseMinutes * 60_000).toISOString();
  await ctx.store.push.savePushCalendar({
    schoolId: ctx.schoolId,
    target: ctx.targetId,
    calendarKey: c.spec.key,
    remoteCalendarId: encodeCalendarId(c.ref.owner, c.ref.remoteCalendarId),
    pausedUntil: until,
    lastReconciledAt: c.stored?.lastReconciledAt ?? null,
  });
  return `paused until ${until} (quota exceeded)`;
}
