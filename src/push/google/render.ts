// A projected event as a Google Calendar event, and back: the fields we write, the content hash, and the
// ownership tags — private extended properties `rostercal` = school:target (the ONE key listings filter on),
// `rostercalSession` = calendar/session and `rostercalHash` = content hash.
import type { calendar_v3 } from '@googleapis/calendar';
import type { CalendarEvent } from '../../calendar/types.ts';
import type { RemoteEvent, Rendered } from '../provider.ts';
import { contentHash, type EventIdentity, parseSessionTag, sessionTag } from '../stable-ids.ts';

export const OWNER_KEY = 'rostercal';
const SESSION_KEY = 'rostercalSession';
const HASH_KEY = 'rostercalHash';
/** Bumped when the mapping from CalendarEvent to Google fields changes: every event then gets rewritten. */
const FORMAT = 'g1';

function locationText(ev: CalendarEvent): string | undefined {
  const l = ev.location;
  if (!l) return undefined;
  if (l.address && !l.name.includes(l.address)) return l.name ? `${l.name}, ${l.address}` : l.address;
  return l.name || undefined;
}

/** The Google event body and content hash of a projected event; `owner` is the target's ownership tag. */
export function renderGoogleEvent(ev: CalendarEvent, identity: EventIdentity, owner: string): Rendered {
  const content = {
    summary: ev.title,
    description: ev.description,
    location: locationText(ev),
    start: { dateTime: ev.start, timeZone: ev.timeZone },
    end: { dateTime: ev.end, timeZone: ev.timeZone },
    // A cancelled session stays visible (its title says so) but no longer blocks time; Google's own
    // `cancelled` status would delete it.
    status: ev.status === 'tentative' ? 'tentative' : 'confirmed',
    transparency: ev.status === 'cancelled' ? 'transparent' : 'opaque',
  };
  const hash = contentHash({ format: FORMAT, ...content });
  const body: calendar_v3.Schema$Event = {
    ...content,
    extendedProperties: {
      private: {
        [OWNER_KEY]: owner,
        [SESSION_KEY]: sessionTag(identity.calendarKey, identity.sessionId),
        [HASH_KEY]: hash,
      },
    },
  };
  return { body, hash };
}

/** What a listed Google event tells the planner (null: not an event we can act on). */
export function remoteEventOf(e: calendar_v3.Schema$Event): RemoteEvent | null {
  if (!e.id) return null;
  const props = e.extendedProperties?.private ?? {};
  const tag = parseSessionTag(props[SESSION_KEY]);
  return {
    remoteEventId: e.id,
    calendarKey: tag?.calendarKey ?? null,
    sessionId: tag?.sessionId ?? null,
    hash: props[HASH_KEY] ?? null,
    start: e.start?.dateTime ? new Date(e.start.dateTime).toISOString() : null,
    end: e.end?.dateTime ? new Date(e.end.dateTime).toISOString() : null,
    live: e.status !== 'cancelled',
  };
}
