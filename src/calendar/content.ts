// What an audience sees of an event, as a hash: SEQUENCE and LAST-MODIFIED move only when this does. A staff
// rename changes the session record (it lists its staff) but not a guardian's event, which never names staff;
// bumping the guardian feed's SEQUENCE for it made every subscriber download the feed again for nothing.
import { createHash } from 'node:crypto';
import type { CalendarEvent } from './types.ts';

/** A short, stable hash of everything the event shows (not its SEQUENCE, LAST-MODIFIED or UID). */
export function eventContentHash(e: CalendarEvent): string {
  const seen = [
    e.start,
    e.end,
    e.timeZone,
    e.title,
    e.description,
    e.status,
    e.location ? [e.location.name, e.location.address, e.location.latitude, e.location.longitude] : null,
    e.color,
    e.categories,
  ];
  return createHash('sha256').update(JSON.stringify(seen)).digest('base64url').slice(0, 22);
}
