// An event as Graph gets it, and back: the body rostercal writes, its content hash, and the single-value extended
// properties under one GUID that mark it as ours (`rostercal` = school:target, filtered on;
// `rostercalSession` = calendar/session; `rostercalHash` = content hash).
import type { CalendarEvent } from '../../calendar/types.ts';
import type { Instant } from '../../domain/types.ts';
import type { RemoteEvent, Rendered } from '../provider.ts';
import { contentHash, type EventIdentity, parseSessionTag, sessionTag } from '../stable-ids.ts';

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

function fromGraphTime(t: { dateTime?: string; timeZone?: string } | undefined): Instant | null {
  if (!t?.dateTime) return null;
  const trimmed = t.dateTime.replace(/(\.\d{3})\d*$/, '$1');
  const ms = Date.parse(/[zZ]|[+-]\d\d:\d\d$/.test(trimmed) ? trimmed : `${trimmed}Z`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** A listed Graph event (its properties expanded) as the planner reads it. */
export function remoteEventOf(e: {
  id: unknown;
  start?: { dateTime?: string; timeZone?: string };
  end?: { dateTime?: string; timeZone?: string };
  singleValueExtendedProperties?: { id: string; value: string }[];
}): RemoteEvent {
  const props = e.singleValueExtendedProperties ?? [];
  const prop = (id: string) => props.find((p) => p.id.toLowerCase() === id.toLowerCase())?.value ?? null;
  const tag = parseSessionTag(prop(SESSION_PROP));
  return {
    remoteEventId: String(e.id),
    calendarKey: tag?.calendarKey ?? null,
    sessionId: tag?.sessionId ?? null,
    hash: prop(HASH_PROP),
    start: fromGraphTime(e.start),
    end: fromGraphTime(e.end),
    live: true,
  };
}
