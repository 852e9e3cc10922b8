// The planner: what a push must write so each remote calendar equals the projection. Pure: desired events,
// mappings (what we believe we wrote) and the remote listing in; operations per calendar out. No store, no
// provider, no clock — test/push/plan.test.ts drives it with plain objects.
//
// With a trusted listing (reconciliation) the remote is the truth: adopt matches, delete orphans and duplicates,
// recreate what is missing. Without one the mapping table is: create, update, delete only what differs by
// content hash. A listing empty or sharply smaller than what we wrote is not trusted (the run turns suspicious),
// and deletions in numbers that trip the guard are dropped unless forced.
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id, Instant } from '../domain/types.ts';
import type { PushMapping, SchoolId } from '../store/types.ts';
import type { CalendarRef, FailureKind, RemoteEvent, Rendered, WriteOp } from './provider.ts';
import type { EventIdentity } from './stable-ids.ts';
import { type CalendarOutcome, isGone, type PlannedOp } from './summary.ts';

/** The content hash of a mapping written ahead of a create that has not been confirmed yet. */
export const PENDING = '';

/** A projected event this calendar should show. */
export interface Desired {
  sessionId: Id;
  event: CalendarEvent;
  rendered: Rendered;
  identity: EventIdentity;
}

/** Where a mapped session that is no longer desired stands in the store now. */
export interface Departed {
  start: Instant;
  end: Instant;
  deleted: boolean;
}

export interface CalendarInput {
  key: string;
  /** The calendar's state after it was ensured and listed. */
  state: CalendarOutcome['state'];
  ref: CalendarRef | null;
  /** Why a provider failed the calendar, when one did: a calendar found gone ('calendar-gone') is not written. */
  failure?: FailureKind;
  desired: ReadonlyMap<Id, Desired>;
  mappings: ReadonlyMap<Id, PushMapping>;
  /** Our events in the calendar when it was listed this run; null when it was not. */
  listing: readonly RemoteEvent[] | null;
  /** Stored sessions of mappings no longer desired (missing: not in the store at all). */
  departed: ReadonlyMap<Id, Departed>;
}

export interface PlanContext {
  schoolId: SchoolId;
  target: string;
  window: { from: Instant; to: Instant };
  maxShrinkFraction: number;
  /** Apply deletions even when their number trips the guard. */
  force: boolean;
  /** The time stamped on adopted mappings. */
  at: Instant;
  /** The provider's deterministic event id for a create (Google), or null. */
  eventIdFor: (identity: EventIdentity) => string | null;
}

export interface CalendarPlan {
  key: string;
  ops: WriteOp[];
  /** The same operations for people (shown by dry runs), with why. */
  planned: PlannedOp[];
  /** Mappings to (re)write without a remote write (adoptions of unchanged events). */
  adopt: PushMapping[];
  /** Mappings to drop without a remote write (nothing remote to delete). */
  forget: Id[];
  unchanged: number;
  reconciled: boolean;
  untrusted: boolean;
}

export interface PushPlan {
  calendars: CalendarPlan[];
  warnings: string[];
}

export function planPush(inputs: CalendarInput[], ctx: PlanContext): PushPlan {
  const warnings: string[] = [];
  const calendars = inputs.map((c) => planCalendar(c, ctx, warnings));
  if (!ctx.force) warnings.push(...guardDeletions(inputs, calendars, ctx.maxShrinkFraction));
  return { calendars, warnings };
}

/** A calendar's plan before anything is planned: no writes, nothing counted, nothing found. */
export function emptyPlan(key: string): CalendarPlan {
  return {
    key,
    ops: [],
    planned: [],
    adopt: [],
    forget: [],
    unchanged: 0,
    reconciled: false,
    untrusted: false,
  };
}

export function planCalendar(c: CalendarInput, ctx: PlanContext, warnings: string[] = []): CalendarPlan {
  const plan = emptyPlan(c.key);
  const listing = trustedListing(c, ctx, plan, warnings);
  if (!c.ref || isGone(c) || !['ok', 'created', 'retired'].includes(c.state)) return plan;
  const stale = listing
    ? diffWithListing(c, c.ref, listing, ctx, plan)
    : diffWithMappings(c, c.ref, ctx, plan);
  for (const m of stale) planStale(c, c.ref, m, listing !== null, ctx, plan);
  return plan;
}

/** The listing, when there is one and it can be believed. */
function trustedListing(
  c: CalendarInput,
  ctx: PlanContext,
  plan: CalendarPlan,
  warnings: string[],
): RemoteEvent[] | null {
  if (!c.listing) return null;
  const ours = c.listing.filter((e) => inWindow(e, ctx.window));
  const expected = [...c.mappings.values()].filter(
    (m) => m.contentHash !== PENDING && c.desired.has(m.sessionId),
  ).length;
  const liveRemote = ours.filter((e) => e.live).length;
  const shrunk =
    expected > 0 &&
    (liveRemote === 0 || (expected >= 4 && liveRemote < expected * (1 - ctx.maxShrinkFraction)));
  if (shrunk) {
    plan.untrusted = true;
    warnings.push(
      `${c.key}: the remote listing shows ${liveRemote} of ${expected} events we wrote; not trusted`,
    );
    return null;
  }
  plan.reconciled = true;
  return ours;
}

/** Events in a listing that the planner may act on: ours, inside the window. */
function inWindow(e: RemoteEvent, w: { from: Instant; to: Instant }): boolean {
  if (!e.start || !e.end) return true;
  return e.end > w.from && e.start < w.to;
}

function add(plan: CalendarPlan, op: WriteOp, reason: string, ev: CalendarEvent | null): void {
  plan.ops.push(op);
  plan.planned.push({
    kind: op.kind,
    sessionId: op.identity.sessionId,
    title: ev?.title ?? null,
    start: ev?.start ?? null,
    reason,
  });
}

function createOp(ref: CalendarRef, d: Desired, ctx: PlanContext, generation?: string): WriteOp {
  return {
    kind: 'create',
    calendar: ref,
    identity: d.identity,
    rendered: d.rendered,
    remoteEventId: ctx.eventIdFor(d.identity),
    ...(generation ? { generation } : {}),
  };
}

function updateOp(ref: CalendarRef, d: Desired, remoteEventId: string): WriteOp {
  return { kind: 'update', calendar: ref, identity: d.identity, rendered: d.rendered, remoteEventId };
}

function identityOf(c: CalendarInput, ctx: PlanContext, sessionId: Id): EventIdentity {
  return { schoolId: ctx.schoolId, target: ctx.target, calendarKey: c.key, sessionId };
}

/** Against the mapping table: returns the mappings whose session is no longer desired. */
function diffWithMappings(
  c: CalendarInput,
  ref: CalendarRef,
  ctx: PlanContext,
  plan: CalendarPlan,
): PushMapping[] {
  for (const d of c.desired.values()) {
    const m = c.mappings.get(d.sessionId);
    if (!m) add(plan, createOp(ref, d, ctx), 'new', d.event);
    else if (m.contentHash === PENDING) add(plan, createOp(ref, d, ctx), 'unfinished create', d.event);
    else if (m.contentHash !== d.rendered.hash)
      add(plan, updateOp(ref, d, m.remoteEventId), 'changed', d.event);
    else plan.unchanged++;
  }
  return [...c.mappings.values()].filter((m) => !c.desired.has(m.sessionId));
}

/**
 * Against a trusted listing: returns the mappings whose session is no longer desired and whose event the
 * listing did not show.
 */
function diffWithListing(
  c: CalendarInput,
  ref: CalendarRef,
  listing: RemoteEvent[],
  ctx: PlanContext,
  plan: CalendarPlan,
): PushMapping[] {
  const bySession = new Map<Id, RemoteEvent[]>();
  const orphans: RemoteEvent[] = [];
  for (const e of listing) {
    if (e.sessionId === null || e.calendarKey !== c.key || !c.desired.has(e.sessionId)) {
      if (e.live) orphans.push(e);
      continue;
    }
    const list = bySession.get(e.sessionId) ?? [];
    list.push(e);
    bySession.set(e.sessionId, list);
  }
  for (const d of c.desired.values()) matchDesired(c, ref, d, bySession.get(d.sessionId) ?? [], ctx, plan);
  for (const e of orphans) {
    const identity = identityOf(c, ctx, e.sessionId ?? -1);
    add(plan, { kind: 'delete', calendar: ref, identity, remoteEventId: e.remoteEventId }, 'orphan', null);
  }
  const listed = new Set(listing.map((e) => e.remoteEventId));
  return [...c.mappings.values()].filter((m) => !c.desired.has(m.sessionId) && !listed.has(m.remoteEventId));
}

/** One desired event against the remote events tagged with its session: keep one, delete the rest. */
function matchDesired(
  c: CalendarInput,
  ref: CalendarRef,
  d: Desired,
  candidates: RemoteEvent[],
  ctx: PlanContext,
  plan: CalendarPlan,
): void {
  const mapped = c.mappings.get(d.sessionId);
  const keeper =
    candidates.find((e) => e.live && e.remoteEventId === mapped?.remoteEventId) ??
    candidates.find((e) => e.live) ??
    candidates[0];
  for (const e of candidates)
    if (e !== keeper && e.live)
      add(
        plan,
        { kind: 'delete', calendar: ref, identity: d.identity, remoteEventId: e.remoteEventId },
        'duplicate',
        d.event,
      );
  if (!keeper) {
    const op = createOp(ref, d, ctx, mapped?.remoteEventId || undefined);
    add(plan, op, mapped ? 'missing remotely' : 'new', d.event);
  } else if (keeper.live && keeper.hash === d.rendered.hash) {
    plan.unchanged++;
    if (!mapped || mapped.remoteEventId !== keeper.remoteEventId || mapped.contentHash !== d.rendered.hash)
      plan.adopt.push({
        schoolId: ctx.schoolId,
        target: ctx.target,
        calendarKey: c.key,
        sessionId: d.sessionId,
        remoteEventId: keeper.remoteEventId,
        contentHash: d.rendered.hash,
        updatedAt: ctx.at,
      });
  } else {
    const reason = keeper.live ? 'changed' : 'deleted remotely: restore';
    add(plan, updateOp(ref, d, keeper.remoteEventId), reason, d.event);
  }
}

/** A mapped event whose session is not desired: delete, unless the session simply moved out of the window. */
function planStale(
  c: CalendarInput,
  ref: CalendarRef,
  m: PushMapping,
  listed: boolean,
  ctx: PlanContext,
  plan: CalendarPlan,
): void {
  const s = c.departed.get(m.sessionId);
  const outside = s !== undefined && !s.deleted && (s.end <= ctx.window.from || s.start >= ctx.window.to);
  if (outside && c.state !== 'retired') return;
  if (!m.remoteEventId || (listed && m.contentHash === PENDING)) {
    plan.forget.push(m.sessionId);
    return;
  }
  if (listed && !outside) {
    // A trusted listing did not show it: nothing remote to delete.
    plan.forget.push(m.sessionId);
    return;
  }
  const identity = identityOf(c, ctx, m.sessionId);
  plan.ops.push({ kind: 'delete', calendar: ref, identity, remoteEventId: m.remoteEventId });
  plan.planned.push({
    kind: 'delete',
    sessionId: m.sessionId,
    title: null,
    start: s?.start ?? null,
    reason: !s || s.deleted ? 'session deleted' : 'no longer in this calendar',
  });
}

/** Deletions in numbers that suggest a broken store or scope are dropped (the run turns suspicious). */
function guardDeletions(inputs: CalendarInput[], plans: CalendarPlan[], maxShrinkFraction: number): string[] {
  const totalDesired = inputs.reduce((n, c) => n + c.desired.size, 0);
  const totalMapped = inputs.reduce((n, c) => n + c.mappings.size, 0);
  const totalDeletes = plans.reduce((n, p) => n + p.ops.filter((o) => o.kind === 'delete').length, 0);
  const retired = plans.filter((_p, i) => inputs[i]!.state === 'retired');
  let warning: string | null = null;
  if (totalDesired === 0 && totalMapped > 0 && totalDeletes > 0)
    warning = `nothing to push but ${totalMapped} events pushed before: the store looks empty; deleting nothing`;
  else if (totalDeletes > Math.max(20, maxShrinkFraction * totalMapped))
    warning = `${totalDeletes} deletions of ${totalMapped} pushed events exceed the guard; deleting nothing (rerun with force to apply)`;
  else if (retired.length > Math.max(3, maxShrinkFraction * (inputs.length - retired.length))) {
    // Their planned operations stay visible in a dry run; none is written.
    for (const p of retired) p.ops = [];
    return [`${retired.length} calendars left the scope at once; not emptying them`];
  }
  if (!warning) return [];
  for (const p of plans) {
    p.ops = p.ops.filter((o) => o.kind !== 'delete');
    p.forget = [];
  }
  return [warning];
}
