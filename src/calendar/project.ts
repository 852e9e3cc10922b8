// The one place that decides what a session says to whom. Feeds, Google and Outlook pushes call projectSession;
// none of them re-derives titles, descriptions or visibility.
//
// Privacy decisions (children's data):
// - guardian/student audiences never get internal `notes`, draft fixtures, or custom fields whose
//   showToUserTypes lacks their user type; a field without metadata is treated as not shown to anyone but staff.
// - `student`-type custom fields are rendered for staff only. For guardians they are dropped even when the
//   metadata says guardians may see them: such a field ("Captain", "Lift with") names other children, and a
//   team or activity feed is shared by many families. Raw ids are dropped too (they identify a child as well).
// - `staff`-type fields resolve to staff names for any audience the metadata allows: staff names are what a
//   parent sees on the team sheet anyway.
// - The student list of a session is never printed; staff get a count.
// - Free text written upstream (session titles, parent notes, custom fields) may name a child ("Piano – Ana
//   Lima", "MacDonald, Olivia's lift"). For guardians and students every spelling of every known student's
//   name (other-children-filter.ts) is replaced (template description.nameRemoved), except the feed's own student's in their
//   student feed. A location that names a student becomes description.locationRemoved, without address or GEO.
import type { CustomFieldMeta, CustomFieldValue, Id, Session, UserType } from '../domain/types.ts';
import type { RecordMeta } from '../store/types.ts';
import { type FeedScopeRef, type ProjectionContext, studentsAround } from './context.ts';
import { decideGated } from './decision.ts';
import { CAPS, capText, cleanText, type Say, throughGate, voiceFor } from './gate.ts';
import { roundLine } from './round.ts';
import { fill } from './templates.ts';
import type { Audience, CalendarEvent } from './types.ts';
import { eventUid } from './uid.ts';

export type ProjectableSession = Session & {
  meta: Pick<RecordMeta, 'version' | 'updatedAt'> & Partial<RecordMeta>;
};

const USER_TYPES: Record<Audience, readonly UserType[]> = {
  staff: ['staff', 'manager', 'admin'],
  guardian: ['guardian'],
  student: ['student'],
};

export function audienceMaySee(meta: CustomFieldMeta, audience: Audience): boolean {
  return meta.showToUserTypes.some((t) => USER_TYPES[audience].includes(t));
}

/**
 * The event for one audience, or null when that audience must not see the session at all
 * (deleted, or a draft for guardians and students).
 */
export function projectSession(
  raw: ProjectableSession,
  ctx: ProjectionContext,
  audience: Audience,
  scope?: FeedScopeRef,
): CalendarEvent | null {
  if (raw.meta.deletedAt) return null;
  const isStaff = audience === 'staff';
  if (raw.status === 'draft' && !isStaff) return null;

  // From here on the session is read only through the gate (gate.ts): every string of it is already what this
  // audience may read. Decisions on raw values (home or away) may read `raw`; text never does.
  const keep = scope?.scope === 'student' ? scope.id : null;
  const say = voiceFor(ctx, audience, keep, raw);
  const session = throughGate(raw, say);
  const t = ctx.templates;
  // What the session is (title, status, result, cancelled and why) is decided in decision.ts, for every output.
  const d = decideGated(raw, session, ctx, scope);

  // A cancelled session says so once, first, and drops what only matters if it goes ahead (meet time,
  // uniform, transport); a note that only repeats "this session is cancelled" is left out, a reason is kept.
  const cancelled = d.cancelled;
  const parts: string[] = [];
  if (cancelled) parts.push(t.description.cancelled);
  if (session.status === 'unconfirmed') parts.push(t.description.unconfirmed);
  if (session.status === 'draft') parts.push(t.description.draft);
  if (d.result) parts.push(fill(t.description.result, { result: d.result }));
  if (session.roundName?.trim()) parts.push(roundLine(session.roundName, t));
  const parentNotes = cancelled ? (d.cancellationReason ?? '') : session.studentParentNotes.trim();
  if (isStaff) {
    if (parentNotes) parts.push(fill(t.description.parentNotesForStaff, { notes: parentNotes }));
    const notes = session.notes.trim();
    if (notes) parts.push(fill(t.description.staffNotes, { notes }));
  } else if (parentNotes) {
    parts.push(fill(t.description.parentNotes, { notes: parentNotes }));
  }
  // A bye drops them too: there is nothing to meet for or to wear.
  const fields = cancelled || d.bye ? [] : renderCustomFields(session, ctx, audience, scope, say);
  if (fields.length) {
    parts.push(fields.map((f) => fill(t.description.customField, f)).join('\n'));
  }
  if (isStaff) {
    const staffLines: string[] = [];
    const staffNames = session.staff.map((s) => `${s.firstName} ${s.lastName}`.trim()).filter(Boolean);
    if (staffNames.length) staffLines.push(fill(t.description.staff, { names: staffNames.join(', ') }));
    const teamNames = session.teams.map((x) => x.name).filter(Boolean);
    if (teamNames.length) staffLines.push(fill(t.description.teams, { names: teamNames.join(', ') }));
    if (session.students.length) {
      staffLines.push(fill(t.description.studentCount, { count: session.students.length }));
    }
    if (staffLines.length) parts.push(staffLines.join('\n'));
  }

  const loc = session.location;
  let location: CalendarEvent['location'] =
    loc?.name.trim() || loc?.address?.trim()
      ? {
          name: capText(loc.name.trim() || (loc.address ?? '').trim(), CAPS.location),
          address: loc.address?.trim() ? capText(loc.address.trim(), CAPS.address) : null,
          latitude: validCoordinate(loc.latitude, 90),
          longitude: validCoordinate(loc.longitude, 180),
        }
      : null;
  // A venue that names a child is usually their home ("Olivia MacDonald's house, 12 Smith St"): the address
  // and coordinates would point at it even with the name scrubbed, so the whole location becomes neutral.
  const rawLoc = raw.location;
  if (
    !isStaff &&
    location &&
    rawLoc &&
    ctx.names.mentions(cleanText(`${rawLoc.name}\n${rawLoc.address ?? ''}`), keep, studentsAround(ctx, raw))
  ) {
    location = { name: t.description.locationRemoved, address: null, latitude: null, longitude: null };
  }

  return {
    sessionId: session.id,
    uid: eventUid(ctx.school, session.id, scope),
    sequence: session.meta.version,
    lastModified: session.meta.updatedAt,
    start: session.start,
    end: session.end,
    timeZone: ctx.school.timeZone,
    title: d.title,
    description: capText(parts.join(t.description.separator), CAPS.description),
    status: d.status,
    location,
    color: normaliseHexColor(session.activity.hexColor) ?? normaliseHexColor(session.hexColor),
    categories: [session.activity.name, ...(d.fixture ? ['Fixture'] : [])]
      .filter(Boolean)
      .map((c) => capText(c, CAPS.label)),
    ...(d.bye && !cancelled ? { noGame: true as const } : {}),
  };
}

/**
 * What the families of `scope`'s team are told of the session besides its time and place (meet time, uniform,
 * transport: the custom fields guardians may see), in the words and order of their calendars. Nothing for a
 * cancelled session, as their calendars say nothing of it either. For the staff's match-day sheet and session page.
 */
export function familyFacts(
  raw: Session,
  ctx: ProjectionContext,
  scope: FeedScopeRef,
): { label: string; value: string }[] {
  if (raw.cancelled) return [];
  const say = voiceFor(ctx, 'guardian', null, raw);
  return renderCustomFields(throughGate(raw, say), ctx, 'guardian', scope, say);
}

/** Session-level values first, then the scope's team, then the other teams; the first value of a key wins. */
function collectCustomValues(
  session: Session,
  scope: FeedScopeRef | undefined,
): Map<string, CustomFieldValue> {
  const out = new Map<string, CustomFieldValue>();
  const add = (data: Record<string, CustomFieldValue>) => {
    for (const [k, v] of Object.entries(data)) if (!out.has(k)) out.set(k, v);
  };
  add(session.customFieldsData ?? {});
  const teams = [...session.teams];
  if (scope?.scope === 'team') teams.sort((a, b) => Number(b.id === scope.id) - Number(a.id === scope.id));
  for (const team of teams) add(team.customFieldsData ?? {});
  return out;
}

/** Metadata keys in display order: each field follows the one named by its showAfterField. */
export function orderCustomFields(fields: Iterable<CustomFieldMeta>): CustomFieldMeta[] {
  const all = [...fields];
  const byKey = new Map(all.map((f) => [f.key, f]));
  const children = new Map<string | null, CustomFieldMeta[]>();
  for (const f of all) {
    const parent = f.showAfterField !== null && byKey.has(f.showAfterField) ? f.showAfterField : null;
    const list = children.get(parent) ?? [];
    list.push(f);
    children.set(parent, list);
  }
  const out: CustomFieldMeta[] = [];
  const seen = new Set<string>();
  const visit = (parent: string | null) => {
    for (const f of children.get(parent) ?? []) {
      if (seen.has(f.key)) continue;
      seen.add(f.key);
      out.push(f);
      visit(f.key);
    }
  };
  visit(null);
  // A cycle in showAfterField has no root: keep those fields, in their listed order.
  for (const f of all) if (!seen.has(f.key)) out.push(f);
  return out;
}

function idsOf(value: CustomFieldValue): Id[] {
  if (Array.isArray(value)) return value.filter((n) => Number.isFinite(n));
  return value
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n));
}

function formatTime(value: string): string {
  const m = /^(\d{1,2}):(\d{2})(?::\d{2})?$/.exec(value.trim());
  return m ? `${m[1]!.padStart(2, '0')}:${m[2]}` : value.trim();
}

const orderedCache = new WeakMap<ReadonlyMap<string, CustomFieldMeta>, CustomFieldMeta[]>();

function renderCustomFields(
  session: Session,
  ctx: ProjectionContext,
  audience: Audience,
  scope: FeedScopeRef | undefined,
  say: Say,
): { label: string; value: string }[] {
  const values = collectCustomValues(session, scope);
  if (values.size === 0) return [];
  const isStaff = audience === 'staff';
  const out: { label: string; value: string }[] = [];
  let ordered = orderedCache.get(ctx.customFields);
  if (!ordered) {
    ordered = orderCustomFields(ctx.customFields.values());
    orderedCache.set(ctx.customFields, ordered);
  }
  for (const meta of ordered) {
    const raw = values.get(meta.key);
    if (raw === undefined || !audienceMaySee(meta, audience)) continue;
    let text: string;
    switch (meta.dataType) {
      case 'staff': {
        const names = idsOf(raw).flatMap((id) => {
          const fromSession = session.staff.find((s) => s.id === id);
          const name =
            ctx.staffNames.get(id) ??
            (fromSession ? `${fromSession.firstName} ${fromSession.lastName}`.trim() : undefined);
          if (name) return [say(name)];
          return isStaff ? [`staff #${id}`] : [];
        });
        text = names.join(', ');
        break;
      }
      case 'student': {
        if (!isStaff) continue;
        text = idsOf(raw)
          .map((id) => say(ctx.studentNames.get(id) ?? `student #${id}`))
          .join(', ');
        break;
      }
      case 'time':
        text = Array.isArray(raw) ? raw.join(', ') : formatTime(raw);
        break;
      default:
        text = Array.isArray(raw) ? raw.join(', ') : raw.trim();
    }
    if (text) out.push({ label: capText(say(meta.label), CAPS.label), value: capText(text, CAPS.part) });
  }
  return out;
}

function validCoordinate(v: number | null, limit: number): number | null {
  return v !== null && Number.isFinite(v) && Math.abs(v) <= limit ? v : null;
}

/** `#rrggbb` (lower case) from `#RRGGBB`, `rrggbb`, or `#rgb`; null for anything else. */
export function normaliseHexColor(v: string | null): string | null {
  const m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(v?.trim() ?? '');
  if (!m) return null;
  const hex = m[1]!.toLowerCase();
  return `#${hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex}`;
}
