// An event as Graph gets it: the body rostercal writes, its content hash, and the single-value extended
// properties under one GUID that mark it as ours (`rostercal` = school:target, filtered on;
// `rostercalSession` = calendar/session; `rostercalHash` = content hash).
import type { CalendarEvent } from '../../calendar/types.ts';
import type { Instant } from '../../domain/types.ts';
import type { Rendered } from '../provider.ts';
import { contentHash, type EventIdentity, sessionTag } from '../stable-ids.ts';

const PROPERTY_SET = '{8d6a2c4e-31b7-4f0a-9e25-6c1d7b3f0a94}';
export const OWNER_PROP = `String ${PROPERTY_SET} Name rostercal`;
export const SESSION_PROP = `String ${PROPERTY_SET} Name rostercalSession`;
export const HASH_PROP = `String ${PROPERTY_SET} Name rostercalHash`;
const FORMAT = 'o1';

function graphUtc(iso: Instant): string {
  return iso.replace(/Z$/, '');
}

/** The Graph event body and content hash of a projected event; `owner` is the target's ownership tag. */
export function renderOutlookEvent(ev: CalendarEvent, identity: EventIdentity, owner: string): Rendered {
  const loc = ev.location;
  const content = {
    subject: ev.title,
    body: { contentType: 'text', content: ev.description },
    start: { dateTime: graphUtc(ev.start), timeZone: 'UTC' },
    end: { dateTime: graphUtc(ev.end), timeZone: 'UTC' },
    location: loc
      ? {
          displayName: loc.name,
          ...(loc.address ? { address: { street: loc.address } } : {}),
          ...(loc.latitude !== null && loc.longitude !== null
            ? { coordinates: { latitude: loc.latitude, longitude: loc.longitude } }
            : {}),
        }
      : { displayName: '' },
    // A cancelled session stays visible (its title says so) but frees the time.
    showAs: ev.status === 'cancelled' ? 'free' : ev.status === 'tentative' ? 'tentative' : 'busy',
  };
  const hash = contentHash({ format: FORMAT, ...content });
  return {
    hash,
    body: {
      ...content,
      singleValueExtendedProperties: [
        { id: OWNER_PROP, value: owner },
        { id: SESSION_PROP, value: sessionTag(identity.calendarKey, identity.sessionId) },
        { id: HASH_PROP, value: hash },
      ],
    },
  };
}
