// SEQUENCE and LAST-MODIFIED per feed event, advanced only when what the feed's audience sees changes.
// The projection gives each event the session's record version and update time; those move on any upstream
// edit, including ones this audience never sees (a staff rename, a staff-only note). So each feed remembers,
// per session, the content hash it last published with its SEQUENCE and LAST-MODIFIED (store:
// feed_event_versions) and keeps them while the hash holds. First sight keeps the projection's values, which is
// what feeds published before this existed, so SEQUENCE never goes backwards for a subscriber.
import { eventContentHash } from '../calendar/content.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { PublishedEvent, SchoolId, Store, StoredFeedScope } from '../store/types.ts';

/**
 * `onSaveError`: told instead of throwing when the versions cannot be stored (a full disk, a read-only store);
 * the events keep the versions computed here, and the next render computes the same from what is stored.
 */
export async function versionFeedEvents(
  store: Pick<Store, 'feeds'>,
  feed: { schoolId: SchoolId; scope: StoredFeedScope; scopeId: Id },
  events: CalendarEvent[],
  now: Date,
  onSaveError?: (err: unknown) => void,
): Promise<CalendarEvent[]> {
  const before = await store.feeds.getFeedEventVersions(feed.schoolId, feed.scope, feed.scopeId);
  const after = new Map<Id, PublishedEvent>();
  let changed = before.size !== events.length;
  const nowIso = new Date(Math.floor(now.getTime() / 1000) * 1000).toISOString();
  const out = events.map((e) => {
    const hash = eventContentHash(e);
    const prev = before.get(e.sessionId);
    let v: PublishedEvent;
    if (!prev) v = { hash, sequence: e.sequence, lastModified: e.lastModified };
    else if (prev.hash === hash) v = prev;
    else {
      // The record's own update time when it is newer; otherwise (wording or context changed) now.
      const lastModified = e.lastModified > prev.lastModified ? e.lastModified : nowIso;
      v = { hash, sequence: Math.max(prev.sequence + 1, e.sequence), lastModified };
    }
    if (v !== prev) changed = true;
    after.set(e.sessionId, v);
    return v.sequence === e.sequence && v.lastModified === e.lastModified
      ? e
      : { ...e, sequence: v.sequence, lastModified: v.lastModified };
  });
  if (!changed) return out;
  try {
    await store.feeds.saveFeedEventVersions(feed.schoolId, feed.scope, feed.scopeId, after);
  } catch (err) {
    if (!onSaveError) throw err;
    onSaveError(err);
  }
  return out;
}
