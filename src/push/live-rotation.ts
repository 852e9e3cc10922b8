// Rotating a feed also replaces its public Google calendar (`calendars.familiesMayAdd`): its id may have
// leaked like the old URL. At rotation the old calendar stops being publicly readable at once (its `default`
// reader rule removed, when Google answers) and is no longer offered; the next push makes the calendar of the
// new generation, fills it, and deletes the old one (found by its marker even if this step could not reach Google
// or the database is lost). Until then the rotation is pending (a store cursor per target, shown by `status`).

import type { GoogleTarget, PushTargetConfig } from '../config/push-targets.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store } from '../store/types.ts';
import { decodeCalendarId } from './calendar-id.ts';

/** The store cursor (per school and target) listing calendar keys whose public calendar awaits replacement. */
export const pendingCursor = (targetId: string) => `push.live-rotations.${targetId}`;

/** The targets that keep a public calendar for this feed. */
export function publicTargetsFor(
  targets: readonly PushTargetConfig[],
  scope: FeedScope,
  scopeId: Id,
): GoogleTarget[] {
  return targets.filter(
    (t): t is GoogleTarget =>
      t.provider === 'google' &&
      t.google.calendars.familiesMayAdd &&
      t.scope === scope &&
      t.audience !== 'staff' &&
      (!t.ids || t.ids.includes(scopeId)),
  );
}

/**
 * The store cursor holding a public calendar's generation when it is ahead of the feed's version (a feed
 * rotated before its first token was issued keeps version 1, but its calendar is replaced all the same).
 */
export const generationCursor = (targetId: string, key: string) => `push.live-generation.${targetId}.${key}`;

export async function pendingRotations(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  targetId: string,
): Promise<string[]> {
  const raw = await store.records.getCursor(schoolId, pendingCursor(targetId));
  try {
    const list = raw ? (JSON.parse(raw) as unknown) : [];
    return Array.isArray(list) ? list.filter((k): k is string => typeof k === 'string') : [];
  } catch {
    return [];
  }
}

export async function setPending(
  store: Pick<Store, 'records'>,
  schoolId: SchoolId,
  targetId: string,
  key: string,
  pending: boolean,
): Promise<void> {
  const now = await pendingRotations(store, schoolId, targetId);
  const next = pending ? [...new Set([...now, key])] : now.filter((k) => k !== key);
  if (next.length !== now.length)
    await store.records.setCursor(schoolId, pendingCursor(targetId), JSON.stringify(next));
}

export interface ClosedLiveCalendar {
  target: string;
  /** The replaced calendar's id, when one was known. */
  calendarId: string | null;
  /** Its public rule is gone (false: Google was not reachable; the next push removes it first). */
  closed: boolean;
  error?: string;
}

/** The rotation's Google side (see the top of this file); called after the feed's new version is saved. */
export async function closeLiveGoogleCalendars(
  store: Pick<Store, 'records' | 'links' | 'push'>,
  school: { id: SchoolId; targets: readonly PushTargetConfig[] },
  scope: FeedScope,
  scopeId: Id,
): Promise<ClosedLiveCalendar[]> {
  const key = `${scope}:${scopeId}`;
  const out: ClosedLiveCalendar[] = [];
  for (const t of publicTargetsFor(school.targets, scope, scopeId)) {
    const was = Number(await store.records.getCursor(school.id, generationCursor(t.id, key))) || 1;
    const version = (await store.links.getFeedToken(school.id, scope, scopeId))?.version ?? 1;
    await store.records.setCursor(school.id, generationCursor(t.id, key), String(Math.max(was + 1, version)));
    await setPending(store, school.id, t.id, key, true);
    const stored = (await store.push.listPushCalendars(school.id, t.id)).find((c) => c.calendarKey === key);
    if (!stored?.remoteCalendarId) {
      out.push({ target: t.id, calendarId: null, closed: true });
      continue;
    }
    const { owner, id } = decodeCalendarId(stored.remoteCalendarId);
    // Google's client (@googleapis/calendar, ~250 modules) is loaded only by a rotation that has a calendar to close:
    // `rostercal status` and `feeds` read this file's cursors without it.
    const [{ GoogleProvider }, { failureOf }] = await Promise.all([
      import('./google/index.ts'),
      import('./google/clients.ts'),
    ]);
    // Forgotten first: the landing page stops offering it at once, whatever Google answers.
    await store.push.savePushCalendar({
      ...stored,
      remoteCalendarId: '',
      pausedUntil: null,
      lastReconciledAt: null,
    });
    try {
      await new GoogleProvider({
        schoolId: school.id,
        targetId: t.id,
        settings: t.google,
        delegated: false,
      }).closePublic(owner, id);
      out.push({ target: t.id, calendarId: id, closed: true });
    } catch (err) {
      out.push({ target: t.id, calendarId: id, closed: false, error: failureOf(err).message });
    }
  }
  return out;
}

/** One audit/terminal line about the replaced calendars. */
export function describeClosed(closed: ClosedLiveCalendar[]): string | null {
  if (!closed.length) return null;
  return closed
    .map((c) =>
      c.calendarId === null
        ? `live Google calendar (${c.target}): none yet; the next push makes it`
        : `live Google calendar ${c.calendarId} (${c.target}) ${c.closed ? 'no longer public' : `still public until the next push (${c.error})`}; the next push replaces it`,
    )
    .join('; ');
}
