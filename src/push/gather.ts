// Gathering, the first stage of a push (→ Gathered): from the store, every calendar the target keeps (one per member in scope,
// plus those whose member left the scope but still hold our events) with its desired events — the projection of
// its sessions in the window, rendered and content-hashed — and its mappings.
import type { FeedScopeRef } from '../calendar/context.ts';
import { CAPS, capText, feedVoice } from '../calendar/gate.ts';
import type { ProjectionContext } from '../calendar/index.ts';
import type { Audience, CalendarEvent } from '../calendar/types.ts';
import type { PushTargetConfig } from '../config/push-targets.ts';
import type { Id, Instant } from '../domain/types.ts';
import { RotationJournal } from '../feeds/rotations.ts';
import type { PushCalendar, PushMapping, SchoolId, Store, Stored } from '../store/types.ts';
import { decodeCalendarId } from './calendar-id.ts';
import { generationCursor } from './live-rotation.ts';
import { calendarName, type Member, members, ownerOf, sessionsByMember } from './members.ts';
import type { Desired } from './plan.ts';
import type { CalendarRef, CalendarSpec, PushProvider } from './provider.ts';
import { calendarMarker, type EventIdentity } from './stable-ids.ts';
import type { CalendarOutcome } from './summary.ts';

export type ProjectFn = (
  session: Stored<'sessions'>,
  ctx: ProjectionContext,
  audience: Audience,
  scope: FeedScopeRef,
) => CalendarEvent | null;

/**
 * A calendar as the store has it, the first stage's output: what it is, what it should show (its desired events:
 * the projection of its sessions, rendered) and what we believe we wrote (its mappings).
 */
export interface Gathered {
  readonly spec: CalendarSpec;
  readonly stored: PushCalendar | null;
  /** `ok`, or why nothing is written to it this run: `skipped`, `paused`, `retired` (its member left the scope). */
  readonly outcome: Readonly<CalendarOutcome>;
  readonly desired: ReadonlyMap<Id, Desired>;
  readonly mappings: ReadonlyMap<Id, PushMapping>;
  /** Known without asking the remote only for a retired calendar; the others' comes when they are ensured. */
  readonly ref: CalendarRef | null;
}

export interface GatherInput {
  store: Pick<Store, 'records' | 'links' | 'push'>;
  school: { id: SchoolId; name: string; timeZone: string };
  target: PushTargetConfig;
  window: { from: Instant; to: Instant };
  now: Instant;
  context: ProjectionContext;
  project: ProjectFn;
  provider: PushProvider;
  dryRun: boolean;
  /** Problems worth a line in the run's record. */
  note: (msg: string) => void;
  /** Where the feed rotation record is (see PushOptions.dataDir). */
  dataDir?: string;
}

export function emptyCounts(): CalendarOutcome['counts'] {
  return { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };
}

export async function gather(g: GatherInput): Promise<Gathered[]> {
  const { store, school, target } = g;
  const [storedCalendars, allMappings, people] = await Promise.all([
    store.push.listPushCalendars(school.id, target.id),
    store.push.listPushMappings(school.id, target.id),
    members(store, school.id, target),
  ]);
  const calByKey = new Map(storedCalendars.map((c) => [c.calendarKey, c]));
  const mapsByKey = new Map<string, Map<Id, PushMapping>>();
  for (const m of allMappings) {
    const group = mapsByKey.get(m.calendarKey) ?? new Map<Id, PushMapping>();
    group.set(m.sessionId, m);
    mapsByKey.set(m.calendarKey, group);
  }
  if (target.ids) {
    const found = new Set(people.map((p) => p.id));
    for (const id of target.ids)
      if (!found.has(id)) g.note(`${target.scope} ${id} is not in the store (or no longer active)`);
  }
  const ids = people.map((p) => p.id);
  const sessionsOf = await sessionsByMember(store, school.id, target.scope, ids, g.window);
  const generations = await publicGenerations(g, ids);
  const calendars: Gathered[] = [];
  for (const person of people) {
    // A calendar's name and description are read by its audience too (a team's name may name a child).
    const say = feedVoice(g.context, target.audience, { scope: target.scope, id: person.id });
    const m = { ...person, name: capText(say(person.name), CAPS.title) };
    const key = `${target.scope}:${m.id}`;
    const calendar = memberCalendar(
      g,
      m,
      calByKey.get(key) ?? null,
      mapsByKey.get(key) ?? new Map(),
      generations,
    );
    mapsByKey.delete(key);
    calendars.push(
      calendar.outcome.state === 'ok'
        ? { ...calendar, desired: desiredEvents(g, calendar.spec, m, sessionsOf.get(m.id) ?? []) }
        : calendar,
    );
  }
  // Calendars we wrote into before whose member left the scope: their events go (guarded by the planner). Each
  // group left holds at least the mapping that made it.
  for (const [key, mappings] of mapsByKey) {
    const stored = calByKey.get(key) ?? null;
    if (!stored?.remoteCalendarId) continue;
    calendars.push(retiredCalendar(g, stored, stored.remoteCalendarId, mappings));
  }
  return calendars;
}

/**
 * Public calendars (`calendars.familiesMayAdd`): each member's generation, the rotation count of its feed. A
 * rotated feed gets a new public calendar; the old one's id may have leaked like the old URL.
 */
async function publicGenerations(g: GatherInput, ids: Id[]): Promise<Map<Id, number> | null> {
  if (g.target.provider !== 'google' || !g.target.google.calendars.familiesMayAdd) return null;
  const out = new Map<Id, number>();
  const at = (id: Id, version: number) => out.set(id, Math.max(out.get(id) ?? 1, version));
  for (const t of await g.store.links.listFeedTokens(g.school.id))
    if (t.scope === g.target.scope) at(t.scopeId, t.version);
  for (const id of ids) {
    const key = `${g.target.scope}:${id}`;
    const bumped = Number(await g.store.records.getCursor(g.school.id, generationCursor(g.target.id, key)));
    if (bumped) at(id, bumped);
  }
  const journal = g.dataDir ? new RotationJournal(g.dataDir) : null;
  if (journal?.exists())
    for (const r of journal.read().rotations.values())
      if (r.school === g.school.id && r.scope === g.target.scope) at(r.id, r.version);
  return out;
}

function outcomeOf(
  key: string,
  name: string,
  remoteCalendarId: string | null,
  dryRun: boolean,
): CalendarOutcome {
  return {
    key,
    name,
    remoteCalendarId,
    state: 'ok',
    reconciled: false,
    untrusted: false,
    counts: emptyCounts(),
    ...(dryRun ? { ops: [] } : {}),
  };
}

function memberCalendar(
  g: GatherInput,
  m: Member,
  stored: PushCalendar | null,
  mappings: Map<Id, PushMapping>,
  generations: Map<Id, number> | null,
): Gathered {
  const { school, target } = g;
  const key = `${target.scope}:${m.id}`;
  const owner = ownerOf(target, m);
  const known = stored?.remoteCalendarId ? decodeCalendarId(stored.remoteCalendarId) : null;
  const generation = generations ? (generations.get(m.id) ?? 1) : undefined;
  const marker = calendarMarker(school.id, target.id, key, generation);
  const spec: CalendarSpec = {
    key,
    name: calendarName(target, school, m),
    description: `${target.scope === 'staff' ? 'Sessions' : 'Sessions and fixtures'} of ${m.name} at ${school.name}, kept up to date by rostercal: changes made here are overwritten.\n${marker}`,
    marker,
    timeZone: school.timeZone,
    owner,
    memberEmail: m.email,
    // A calendar known under another owner (the member's address changed) is looked up again.
    remoteCalendarId: known && known.owner === owner ? known.id : null,
    ...(generation !== undefined ? { generation } : {}),
  };
  const name = target.provider === 'outlook' ? `${spec.name} (${owner ?? 'no mailbox'})` : spec.name;
  const outcome = outcomeOf(key, name, spec.remoteCalendarId, g.dryRun);
  const calendar: Gathered = { spec, stored, outcome, desired: new Map(), mappings, ref: null };
  if (target.provider === 'outlook' && !owner) {
    g.note(`${key} (${m.name}): no mailbox address (template ${target.outlook.mailbox})`);
    return { ...calendar, outcome: { ...outcome, state: 'skipped', note: 'no mailbox address' } };
  }
  if (stored?.pausedUntil && stored.pausedUntil > g.now)
    return {
      ...calendar,
      outcome: { ...outcome, state: 'paused', note: `paused until ${stored.pausedUntil}` },
    };
  return calendar;
}

function desiredEvents(
  g: GatherInput,
  spec: CalendarSpec,
  m: Member,
  sessions: Stored<'sessions'>[],
): Map<Id, Desired> {
  const desired = new Map<Id, Desired>();
  const scopeRef: FeedScopeRef = { scope: g.target.scope, id: m.id };
  for (const s of sessions) {
    const event = g.project(s, g.context, g.target.audience, scopeRef);
    if (!event) continue;
    if (event.status === 'cancelled' && g.target.cancelled === 'remove') continue;
    const identity: EventIdentity = {
      schoolId: g.school.id,
      target: g.target.id,
      calendarKey: spec.key,
      sessionId: s.id,
      ...(spec.generation !== undefined ? { generation: spec.generation } : {}),
    };
    desired.set(s.id, { sessionId: s.id, event, rendered: g.provider.render(event, identity), identity });
  }
  return desired;
}

function retiredCalendar(
  g: GatherInput,
  stored: PushCalendar,
  remoteCalendarId: string,
  mappings: Map<Id, PushMapping>,
): Gathered {
  const key = stored.calendarKey;
  const where = decodeCalendarId(remoteCalendarId);
  const spec: CalendarSpec = {
    key,
    name: key,
    description: '',
    marker: calendarMarker(g.school.id, g.target.id, key),
    timeZone: g.school.timeZone,
    owner: where.owner,
    memberEmail: null,
    remoteCalendarId: where.id,
  };
  return {
    spec,
    stored,
    outcome: { ...outcomeOf(key, key, remoteCalendarId, g.dryRun), state: 'retired' },
    desired: new Map(),
    mappings,
    ref: { key, remoteCalendarId: where.id, owner: where.owner },
  };
}
