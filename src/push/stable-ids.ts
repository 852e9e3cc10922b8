// Identities recomputable from the source, so a crash or a lost database never leads to a duplicate:
// the same (school, target, calendar, session) always yields the same Google event id and Graph transactionId,
// and every pushed event carries an ownership tag naming the school, target, calendar and session.
import { createHash } from 'node:crypto';
import type { Id } from '../domain/types.ts';
import type { SchoolId } from '../store/types.ts';
import { sha256, stableStringify } from '../util/stable-json.ts';

export interface EventIdentity {
  schoolId: SchoolId;
  target: string;
  calendarKey: string;
  sessionId: Id;
  /**
   * The public calendar's generation (the feed's rotation count, `calendars.familiesMayAdd`): a replaced
   * calendar's events get new ids, so a family holding the old and the new calendar never sees one iCalUID twice.
   */
  generation?: number;
}

function digest(parts: string[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/** RFC 4648 base32hex, lower case, no padding: exactly Google's allowed event id alphabet `[a-v0-9]`. */
export function base32hex(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32HEX[(buffer << (5 - bits)) & 31];
  return out;
}

/** Google event id: 32 base32hex characters (160 bits of a SHA-256), within Google's 5–1024 rule. */
export function googleEventId(id: EventIdentity): string {
  return base32hex(
    digest([
      'rostercal-event',
      id.schoolId,
      id.target,
      id.calendarKey,
      String(id.sessionId),
      // Generation 1 keeps the ids of calendars made before generations existed.
      ...((id.generation ?? 1) > 1 ? [`g${id.generation}`] : []),
    ]).subarray(0, 20),
  );
}

/**
 * Graph `transactionId` for a create. `generation` distinguishes a deliberate re-creation (the previous event
 * vanished remotely) from a retry of the same create, which must carry the same id.
 */
export function graphTransactionId(id: EventIdentity, generation = ''): string {
  const h = digest([
    'rostercal-tx',
    id.schoolId,
    id.target,
    id.calendarKey,
    String(id.sessionId),
    generation,
  ]).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Ownership tag value shared by every event of a target: the one key/value remote listings filter on. */
export function ownerTag(schoolId: SchoolId, target: string): string {
  return `${schoolId}:${target}`;
}

/** Per-event tag value: which calendar and session it stands for. */
export function sessionTag(calendarKey: string, sessionId: Id): string {
  return `${calendarKey}/${sessionId}`;
}

export function parseSessionTag(
  value: string | null | undefined,
): { calendarKey: string; sessionId: Id } | null {
  if (!value) return null;
  const slash = value.lastIndexOf('/');
  if (slash <= 0) return null;
  const sessionId = Number(value.slice(slash + 1));
  if (!Number.isSafeInteger(sessionId)) return null;
  return { calendarKey: value.slice(0, slash), sessionId };
}

/** Content hash of what we write (without identity and tags): equal hash, nothing to update. */
export function contentHash(content: unknown): string {
  return sha256(stableStringify(content), 'hex').slice(0, 32);
}

/** Marker put in the description of calendars rostercal creates, to find them again after a lost database. */
export function calendarMarker(
  schoolId: SchoolId,
  target: string,
  calendarKey: string,
  generation = 1,
): string {
  return generation > 1
    ? `[rostercal ${schoolId}/${target}/${calendarKey} g${generation}]`
    : `[rostercal ${schoolId}/${target}/${calendarKey}]`;
}

/**
 * The generation a calendar description's marker names for this calendar key (1 for the plain marker), or null
 * when the description carries no marker of it.
 */
export function markerGeneration(
  description: string | null | undefined,
  schoolId: SchoolId,
  target: string,
  calendarKey: string,
): number | null {
  if (!description) return null;
  const head = `[rostercal ${schoolId}/${target}/${calendarKey}`;
  for (let at = description.indexOf(head); at >= 0; at = description.indexOf(head, at + 1)) {
    const m = /^(?: g([1-9][0-9]{0,8}))?\]/.exec(description.slice(at + head.length));
    if (m) return m[1] ? Number(m[1]) : 1;
  }
  return null;
}
