// The push engine: keeps a target's remote calendars equal to the projection, with no duplicates and no stale
// events, through edits, cancellations, deletions, crashes, lost state and throttling.
//
// One run, per target:
//   calendars  — one per team/activity/staff member/student in scope (ids filter), found or created remotely;
//   desired    — the projection of the calendar's sessions in the window, rendered and content-hashed;
//   reconcile  — when the mapping is missing or pending, or periodically: list our tagged events remotely,
//                adopt matches, delete orphans and duplicates, recreate what is missing — unless the listing is
//                empty or sharply smaller than what we believe is there (then it is not trusted, the run is
//                flagged suspicious, and only the mapping table is used);
//   diff       — against the mapping table (content hash): create, update, delete only what differs;
//   apply      — creates are first recorded as pending mappings (so a crash leaves a trace that triggers a
//                reconciliation), then written in chunks with the mapping saved after each chunk.
// Identity is recomputable (Google event id, Graph transactionId), so retries and re-runs never duplicate.

import type { FeedScopeRef } from '../calendar/context.ts';
import {
  type EventTemplates,
  loadProjectionContext,
  type ProjectionContext,
  projectSession,
} from '../calendar/index.ts';
import type { Audience, CalendarEvent } from '../calendar/types.ts';
import type { Id, Instant } from '../domain/types.ts';
import { type Logger, silentLogger } from '../log.ts';
import type {
  PushCalendar,
  PushMapping,
  RunCounts,
  RunStatus,
  SchoolId,
  Store,
  Stored,
} from '../store/types.ts';
import { keepAlive, processOwner } from '../sync/owner.ts';
import { syncWindow } from '../sync/window.ts';
import { decodeCalendarId, encodeCalendarId } from './calendar-id.ts';
import { calendarMarker, type EventIdentity } from './identity.ts';
import type {
  CalendarRef,
  CalendarSpec,
  ListResult,
  PushProvider,
  RemoteEvent,
  Rendered,
  WriteOp,
  WriteResult,
} from './provider.ts';
import { createProvider } from './providers.ts';
import type { CalendarOutcome, PushSummary } from './summary.ts';
import type { PushTargetConfig } from './targets.ts';

export type ProjectFn = (
  session: Stored<'sessions'>,
  ctx: ProjectionContext,
  audience: Audience,
  scope: FeedScopeRef,
) => CalendarEvent | null;

export interface PushOptions {
  store: Store;
  /** The school; its wording (config eventTemplatesDir) when it has its own. */
  school: { id: SchoolId; name: string; timeZone: string; eventTemplates?: EventTemplates | undefined };
  target: PushTargetConfig;
  /** The projection (default projectSession): the only thing that decides what an event says. */
  project?: ProjectFn;
  /** Projection context (default: loaded from the store). */
  context?: ProjectionContext;
  now?: () => Date;
  /** Plan only: read (store and remote listings), never write. */
  dryRun?: boolean;
  /** Reconcile every calendar with the remote now, whatever the schedule. */
  reconcile?: boolean;
  /** Apply deletions even when their number trips the guard. */
  force?: boolean;
  log?: Logger;
  /** Provider override (tests, benchmarks); default from the target's settings. */
  provider?: PushProvider;
  /** Writes per chunk between mapping saves. */
  chunkSize?: number;
}

interface Desired {
  sessionId: Id;
  event: CalendarEvent;
  rendered: Rendered;
  identity: EventIdentity;
}

interface CalendarWork {
  spec: CalendarSpec;
  stored: PushCalendar | null;
  outcome: CalendarOutcome;
  desired: Map<Id, Desired>;
  mappings: Map<Id, PushMapping>;
  ref: CalendarRef | null;
  fresh: boolean;
  listing: RemoteEvent[] | null;
  ops: WriteOp[];
  /** Mappings to (re)write without a remote write (adoptions of unchanged events). */
  adopt: PushMapping[];
  /** Mappings to drop without a remote write (nothing remote to delete). */
  forget: Id[];
  /** The remote calendar was deleted by hand: forget it (and its mappings) so the next run creates it again. */
  gone: boolean;
}

const PENDING = '';
const MAX_ERRORS = 100;

function fillTemplate(
  template: string,
  values: Record<string, string | number | null | undefined>,
): string | null {
  let missing = false;
  const out = template.replace(/\{(\w+)\}/g, (_m, k: string) => {
    const v = values[k];
    if (v === null || v === undefined || v === '') {
      missing = true;
      return '';
    }
    return String(v);
  });
  return missing ? null : out;
}

interface Member {
  id: Id;
  name: string;
  email: string | null;
  values: Record<string, string | number | null | undefined>;
}

/** Who the target's calendars belong to: every team/activity/staff member/student in scope. */
async function members(store: Store, schoolId: SchoolId, target: PushTargetConfig): Promise<Member[]> {
  const name = (p: { firstName: string; lastName: string }) => `${p.firstName} ${p.lastName}`.trim();
  let all: Member[];
  switch (target.scope) {
    case 'team':
      all = (await store.list(schoolId, 'teams')).map((t) => ({
        id: t.id,
        name: t.name,
        email: null,
        values: {},
      }));
      break;
    case 'activity':
      all = (await store.list(schoolId, 'activities'))
        .filter((a) => !a.archived)
        .map((a) => ({ id: a.id, name: a.name, email: null, values: {} }));
      break;
    case 'staff':
      all = (await store.list(schoolId, 'staff'))
        .filter((s) => !s.frozen)
        .map((s) => ({
          id: s.id,
          name: name(s),
          email: s.email,
          values: {
            id: s.id,
            email: s.email,
            sisId: s.sisId,
            externalId: s.externalId,
            firstName: s.firstName,
            lastName: s.lastName,
          },
        }));
      break;
    case 'student':
      all = (await store.list(schoolId, 'students'))
        .filter((s) => s.current)
        .map((s) => {
          // Student records carry no email in the domain model today; a later one may.
          const email = (s as { email?: string | null }).email ?? null;
          return {
            id: s.id,
            name: name(s),
            email,
            values: { id: s.id, email, sisId: s.sisId, firstName: s.firstName, lastName: s.lastName },
          };
        });
      break;
  }
  if (!target.ids) return all;
  const wanted = new Set(target.ids);
  return all.filter((m) => wanted.has(m.id));
}

function emptyCounts() {
  return { created: 0, updated: 0, deleted: 0, unchanged: 0, failed: 0 };
}

function ownerOf(target: PushTargetConfig, m: Member): string | null {
  if (target.provider === 'outlook')
    return fillTemplate(target.outlook.mailbox, m.values)?.toLowerCase() ?? null;
  if (target.google.calendars.mode !== 'created') return m.email?.toLowerCase() ?? null;
  return null;
}

function calendarName(target: PushTargetConfig, school: { name: string }, m: Member): string {
  if (target.provider === 'outlook') return target.outlook.calendarName;
  return fillTemplate(target.google.calendars.name, { name: m.name, school: school.name }) ?? m.name;
}

/**
 * The sessions of each member's calendar in the window: what `store.listSessions(sessionQuery(scope, id, …))`
 * answers for each id (teams, activity, assigned staff; for a student the sessions listing them plus the
 * sessions of their teams' current rosters), read with one query instead of one per calendar — a school has a
 * thousand student calendars. test/push/scope.test.ts holds the two equal.
 */
export async function sessionsByMember(
  store: Store,
  schoolId: SchoolId,
  scope: PushTargetConfig['scope'],
  ids: Id[],
  window: { from: Instant; to: Instant },
): Promise<Map<Id, Stored<'sessions'>[]>> {
  const out = new Map<Id, Stored<'sessions'>[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return out;
  const all = await store.listSessions(schoolId, { from: window.from, to: window.to });
  let rosters: Map<Id, Id[]> | null = null;
  if (scope === 'student') {
    rosters = new Map();
    for (const t of await store.list(schoolId, 'teams'))
      rosters.set(
        t.id,
        t.students.map((x) => x.studentId),
      );
  }
  for (const s of all) {
    const members = new Set<Id>();
    switch (scope) {
      case 'team':
        for (const t of s.teams) members.add(t.id);
        break;
      case 'activity':
        members.add(s.activity.id);
        break;
      case 'staff':
        for (const x of s.staff) members.add(x.id);
        break;
      case 'student':
        for (const x of s.students) members.add(x.id);
        for (const t of s.teams) for (const id of rosters?.get(t.id) ?? []) members.add(id);
        break;
    }
    for (const id of members) out.get(id)?.push(s);
  }
  return out;
}

/** Events in a listing that the engine may act on: ours, inside the window. */
function inWindow(e: RemoteEvent, w: { from: Instant; to: Instant }): boolean {
  if (!e.start || !e.end) return true;
  return e.end > w.from && e.start < w.to;
}

export async function pushTarget(opts: PushOptions): Promise<PushSummary> {
  return run({ ...opts, dryRun: opts.dryRun ?? false });
}

/** The plan of a push without writing anything: what `rostercal sync --dry-run` prints (see formatPlan). */
export async function planTarget(opts: Omit<PushOptions, 'dryRun'>): Promise<PushSummary> {
  return run({ ...opts, dryRun: true });
}

async function run(opts: PushOptions & { dryRun: boolean }): Promise<PushSummary> {
  // A recorded run belongs to this process, which beats while it goes (see sync/owner.ts).
  const stopBeating = opts.dryRun ? null : await keepAlive(opts.store, opts.log);
  try {
    return await runPush(opts);
  } finally {
    stopBeating?.();
  }
}

async function runPush(opts: PushOptions & { dryRun: boolean }): Promise<PushSummary> {
  const { store, school, target, dryRun } = opts;
  const log = (opts.log ?? silentLogger).child({ school: school.id, target: target.id, dryRun });
  const clock = opts.now ?? (() => new Date());
  const started = clock();
  const startedAt = started.toISOString();
  const t0 = performance.now();
  const window = syncWindow(started, target.window);
  const provider = opts.provider ?? (await createProvider(school.id, target));
  const project = opts.project ?? projectSession;
  const errors: string[] = [];
  const warnings: string[] = [];
  const note = (msg: string) => {
    if (errors.length < MAX_ERRORS) errors.push(msg);
    else if (errors.length === MAX_ERRORS) errors.push('… more problems not listed');
  };
  const runId = dryRun
    ? null
    : await store.startRun({
        schoolId: school.id,
        kind: 'push',
        target: target.id,
        at: startedAt,
        owner: processOwner().id,
      });
  const works: CalendarWork[] = [];
  let fatal: unknown = null;

  try {
    const ctx =
      opts.context ??
      (await loadProjectionContext(
        store,
        school.id,
        school.eventTemplates ? { templates: school.eventTemplates } : {},
      ));
    const [storedCalendars, allMappings, people] = await Promise.all([
      store.listPushCalendars(school.id, target.id),
      store.listPushMappings(school.id, target.id),
      members(store, school.id, target),
    ]);
    const calByKey = new Map(storedCalendars.map((c) => [c.calendarKey, c]));
    const mapsByKey = new Map<string, Map<Id, PushMapping>>();
    for (const m of allMappings) {
      const g = mapsByKey.get(m.calendarKey) ?? new Map<Id, PushMapping>();
      g.set(m.sessionId, m);
      mapsByKey.set(m.calendarKey, g);
    }
    if (target.ids) {
      const found = new Set(people.map((p) => p.id));
      for (const id of target.ids)
        if (!found.has(id)) note(`${target.scope} ${id} is not in the store (or no longer active)`);
    }

    // --- calendars and desired events
    const nowIso = startedAt;
    const sessionsOf = await sessionsByMember(
      store,
      school.id,
      target.scope,
      people.map((p) => p.id),
      window,
    );
    for (const m of people) {
      const key = `${target.scope}:${m.id}`;
      const stored = calByKey.get(key) ?? null;
      const owner = ownerOf(target, m);
      const known = stored?.remoteCalendarId ? decodeCalendarId(stored.remoteCalendarId) : null;
      const spec: CalendarSpec = {
        key,
        name: calendarName(target, school, m),
        description: `${target.scope === 'staff' ? 'Sessions' : 'Sessions and fixtures'} of ${m.name} at ${school.name}, kept up to date by rostercal: changes made here are overwritten.\n${calendarMarker(school.id, target.id, key)}`,
        marker: calendarMarker(school.id, target.id, key),
        timeZone: school.timeZone,
        owner,
        memberEmail: m.email,
        // A calendar known under another owner (the member's address changed) is looked up again.
        remoteCalendarId: known && known.owner === owner ? known.id : null,
      };
      const outcome: CalendarOutcome = {
        key,
        name: target.provider === 'outlook' ? `${spec.name} (${owner ?? 'no mailbox'})` : spec.name,
        remoteCalendarId: spec.remoteCalendarId,
        state: 'ok',
        reconciled: false,
        untrusted: false,
        counts: emptyCounts(),
        ...(dryRun ? { ops: [] } : {}),
      };
      const work: CalendarWork = {
        spec,
        stored,
        outcome,
        desired: new Map(),
        mappings: mapsByKey.get(key) ?? new Map(),
        ref: null,
        fresh: false,
        listing: null,
        ops: [],
        adopt: [],
        forget: [],
        gone: false,
      };
      mapsByKey.delete(key);
      works.push(work);
      if (target.provider === 'outlook' && !owner) {
        outcome.state = 'skipped';
        outcome.note = 'no mailbox address';
        note(`${key} (${m.name}): no mailbox address (template ${target.outlook.mailbox})`);
        continue;
      }
      if (stored?.pausedUntil && stored.pausedUntil > nowIso) {
        outcome.state = 'paused';
        outcome.note = `paused until ${stored.pausedUntil}`;
        continue;
      }
      const sessions = sessionsOf.get(m.id) ?? [];
      const scopeRef: FeedScopeRef = { scope: target.scope, id: m.id };
      for (const s of sessions) {
        const event = project(s, ctx, target.audience, scopeRef);
        if (!event) continue;
        if (event.status === 'cancelled' && target.cancelled === 'remove') continue;
        const identity: EventIdentity = {
          schoolId: school.id,
          target: target.id,
          calendarKey: key,
          sessionId: s.id,
        };
        work.desired.set(s.id, {
          sessionId: s.id,
          event,
          rendered: provider.render(event, identity),
          identity,
        });
      }
    }

    // Calendars we wrote into before whose member left the scope: their events go (guarded below).
    for (const [key, mappings] of mapsByKey) {
      const stored = calByKey.get(key) ?? null;
      if (!stored?.remoteCalendarId || mappings.size === 0) continue;
      const outcome: CalendarOutcome = {
        key,
        name: key,
        remoteCalendarId: stored.remoteCalendarId,
        state: 'retired',
        reconciled: false,
        untrusted: false,
        counts: emptyCounts(),
        ...(dryRun ? { ops: [] } : {}),
      };
      const where = decodeCalendarId(stored.remoteCalendarId);
      works.push({
        spec: {
          key,
          name: key,
          description: '',
          marker: calendarMarker(school.id, target.id, key),
          timeZone: school.timeZone,
          owner: where.owner,
          memberEmail: null,
          remoteCalendarId: where.id,
        },
        stored,
        outcome,
        desired: new Map(),
        mappings,
        ref: { key, remoteCalendarId: where.id, owner: where.owner },
        fresh: false,
        listing: null,
        ops: [],
        adopt: [],
        forget: [],
        gone: false,
      });
    }

    // --- find or create the remote calendars
    const toEnsure = works.filter((w) => w.outcome.state === 'ok');
    const ensured = await provider.ensureCalendars(
      toEnsure.map((w) => w.spec),
      { dryRun },
    );
    for (const w of toEnsure) {
      const r = ensured.get(w.spec.key);
      if (!r?.ok) {
        w.outcome.state = r?.skip ? 'skipped' : 'failed';
        w.outcome.note = r?.reason ?? 'not ensured';
        note(r?.reason ?? `${w.spec.key}: calendar not available`);
        continue;
      }
      w.ref = { key: w.spec.key, remoteCalendarId: r.remoteCalendarId, owner: w.spec.owner };
      w.outcome.remoteCalendarId = r.remoteCalendarId || null;
      if (r.created) {
        w.outcome.state = 'created';
        w.fresh = true;
      }
      const encoded = encodeCalendarId(w.spec.owner, r.remoteCalendarId);
      if (!dryRun && encoded !== (w.stored?.remoteCalendarId ?? null)) {
        const saved: PushCalendar = {
          schoolId: school.id,
          target: target.id,
          calendarKey: w.spec.key,
          remoteCalendarId: encoded,
          pausedUntil: null,
          // A calendar we just created holds nothing: as good as reconciled.
          lastReconciledAt: r.created ? startedAt : (w.stored?.lastReconciledAt ?? null),
        };
        await store.savePushCalendar(saved);
        w.stored = saved;
      }
    }

    // --- reconcile with the remote where due
    const dueBefore = new Date(started.getTime() - target.reconcileEveryHours * 3_600_000).toISOString();
    const toList = works.filter((w) => {
      if (!w.ref || w.fresh || !w.ref.remoteCalendarId) return false;
      if (w.outcome.state !== 'ok' && w.outcome.state !== 'retired') return false;
      if (opts.reconcile) return true;
      if (w.mappings.size === 0 && w.desired.size > 0) return true;
      if ([...w.mappings.values()].some((m) => m.contentHash === PENDING)) return true;
      return !w.stored?.lastReconciledAt || w.stored.lastReconciledAt < dueBefore;
    });
    const listings = toList.length
      ? await provider.listOwned(
          toList.map((w) => w.ref!),
          window,
        )
      : new Map<string, ListResult>();
    // An empty answer where we hold no mapping (a lost database, or a calendar found rather than created) is
    // asked for a second time before it is believed: a flaky empty listing would otherwise mean re-creating
    // every event (harmless on Google, whose ids are ours; on Graph only transactionId would stand in the way).
    const doubtful = toList.filter((w) => {
      const r = listings.get(w.spec.key);
      return r?.ok && r.events.length === 0 && w.mappings.size === 0 && w.desired.size > 0;
    });
    if (doubtful.length) {
      const second = await provider.listOwned(
        doubtful.map((w) => w.ref!),
        window,
      );
      for (const [key, r] of second) listings.set(key, r);
    }
    for (const w of toList) {
      const r = listings.get(w.spec.key);
      if (!r) continue;
      if (!r.ok) {
        if (r.paused) {
          w.outcome.state = 'paused';
          await pause(w);
        } else if (r.skip) {
          w.outcome.state = 'skipped';
        } else if (r.gone) {
          w.outcome.state = 'failed';
          w.gone = true;
        }
        w.outcome.note = r.reason;
        note(`${w.spec.key}: remote listing failed: ${r.reason}`);
        continue;
      }
      const ours = r.events.filter((e) => inWindow(e, window));
      const expected = [...w.mappings.values()].filter(
        (m) => m.contentHash !== PENDING && w.desired.has(m.sessionId),
      ).length;
      const liveRemote = ours.filter((e) => e.live).length;
      const shrunk =
        expected > 0 &&
        (liveRemote === 0 || (expected >= 4 && liveRemote < expected * (1 - target.maxShrinkFraction)));
      if (shrunk) {
        w.outcome.untrusted = true;
        warnings.push(
          `${w.spec.key}: the remote listing shows ${liveRemote} of ${expected} events we wrote; not trusted`,
        );
        continue;
      }
      w.listing = ours;
      w.outcome.reconciled = true;
    }

    // --- diff
    const staleCheck: { w: CalendarWork; m: PushMapping }[] = [];
    for (const w of works) {
      if (!w.ref || w.gone || !['ok', 'created', 'retired'].includes(w.outcome.state)) continue;
      const ref = w.ref;
      const add = (op: WriteOp, reason: string, ev: CalendarEvent | null) => {
        w.ops.push(op);
        w.outcome.ops?.push({
          kind: op.kind,
          sessionId: op.identity.sessionId,
          title: ev?.title ?? null,
          start: ev?.start ?? null,
          reason,
        });
      };
      const createOp = (d: Desired, generation?: string): WriteOp => ({
        kind: 'create',
        calendar: ref,
        identity: d.identity,
        rendered: d.rendered,
        remoteEventId: provider.eventIdFor(d.identity),
        ...(generation ? { generation } : {}),
      });
      const identityOf = (sessionId: Id): EventIdentity => ({
        schoolId: school.id,
        target: target.id,
        calendarKey: w.spec.key,
        sessionId,
      });

      if (w.listing) {
        const bySession = new Map<Id, RemoteEvent[]>();
        const orphans: RemoteEvent[] = [];
        for (const e of w.listing) {
          if (e.sessionId === null || e.calendarKey !== w.spec.key || !w.desired.has(e.sessionId)) {
            if (e.live) orphans.push(e);
            continue;
          }
          const list = bySession.get(e.sessionId) ?? [];
          list.push(e);
          bySession.set(e.sessionId, list);
        }
        for (const d of w.desired.values()) {
          const candidates = bySession.get(d.sessionId) ?? [];
          const mapped = w.mappings.get(d.sessionId);
          const keeper =
            candidates.find((c) => c.live && c.remoteEventId === mapped?.remoteEventId) ??
            candidates.find((c) => c.live) ??
            candidates[0];
          for (const c of candidates)
            if (c !== keeper && c.live)
              add(
                { kind: 'delete', calendar: ref, identity: d.identity, remoteEventId: c.remoteEventId },
                'duplicate',
                d.event,
              );
          if (!keeper) {
            add(
              createOp(d, mapped?.remoteEventId || undefined),
              mapped ? 'missing remotely' : 'new',
              d.event,
            );
          } else if (keeper.live && keeper.hash === d.rendered.hash) {
            w.outcome.counts.unchanged++;
            if (
              !mapped ||
              mapped.remoteEventId !== keeper.remoteEventId ||
              mapped.contentHash !== d.rendered.hash
            )
              w.adopt.push(
                mappingOf(
                  school.id,
                  target.id,
                  w.spec.key,
                  d.sessionId,
                  keeper.remoteEventId,
                  d.rendered.hash,
                  startedAt,
                ),
              );
          } else {
            add(
              {
                kind: 'update',
                calendar: ref,
                identity: d.identity,
                rendered: d.rendered,
                remoteEventId: keeper.remoteEventId,
              },
              keeper.live ? 'changed' : 'deleted remotely: restore',
              d.event,
            );
          }
        }
        for (const e of orphans)
          add(
            {
              kind: 'delete',
              calendar: ref,
              identity: identityOf(e.sessionId ?? -1),
              remoteEventId: e.remoteEventId,
            },
            'orphan',
            null,
          );
        // Mappings whose session is no longer desired and whose event the listing did not show: if the session is
        // outside the window the event stays (history); otherwise nothing remote is left to delete.
        const listed = new Set(w.listing.map((e) => e.remoteEventId));
        for (const m of w.mappings.values()) {
          if (w.desired.has(m.sessionId) || listed.has(m.remoteEventId)) continue;
          staleCheck.push({ w, m });
        }
        continue;
      }

      for (const d of w.desired.values()) {
        const m = w.mappings.get(d.sessionId);
        if (!m) add(createOp(d), 'new', d.event);
        else if (m.contentHash === PENDING) add(createOp(d), 'unfinished create', d.event);
        else if (m.contentHash !== d.rendered.hash)
          add(
            {
              kind: 'update',
              calendar: ref,
              identity: d.identity,
              rendered: d.rendered,
              remoteEventId: m.remoteEventId,
            },
            'changed',
            d.event,
          );
        else w.outcome.counts.unchanged++;
      }
      for (const m of w.mappings.values()) if (!w.desired.has(m.sessionId)) staleCheck.push({ w, m });
    }

    // Mapped events whose session is not desired: delete, unless the session simply moved out of the window.
    for (const { w, m } of staleCheck) {
      const s = await store.get(school.id, 'sessions', m.sessionId, { includeDeleted: true });
      const outside = s && !s.meta.deletedAt && (s.end <= window.from || s.start >= window.to);
      if (outside && w.outcome.state !== 'retired') continue;
      const identity = {
        schoolId: school.id,
        target: target.id,
        calendarKey: w.spec.key,
        sessionId: m.sessionId,
      };
      if (!m.remoteEventId || (w.listing && m.contentHash === PENDING)) {
        w.forget.push(m.sessionId);
        continue;
      }
      if (w.listing && !outside) {
        // A trusted listing did not show it: nothing remote to delete.
        w.forget.push(m.sessionId);
        continue;
      }
      w.ops.push({ kind: 'delete', calendar: w.ref!, identity, remoteEventId: m.remoteEventId });
      w.outcome.ops?.push({
        kind: 'delete',
        sessionId: m.sessionId,
        title: null,
        start: s?.start ?? null,
        reason: !s || s.meta.deletedAt ? 'session deleted' : 'no longer in this calendar',
      });
    }

    // --- guards on deletion
    const totalDesired = works.reduce((n, w) => n + w.desired.size, 0);
    const totalMapped = works.reduce((n, w) => n + w.mappings.size, 0);
    const totalDeletes = works.reduce((n, w) => n + w.ops.filter((o) => o.kind === 'delete').length, 0);
    const retired = works.filter((w) => w.outcome.state === 'retired');
    let blockDeletes = false;
    if (!opts.force) {
      if (totalDesired === 0 && totalMapped > 0 && totalDeletes > 0) {
        warnings.push(
          `nothing to push but ${totalMapped} events pushed before: the store looks empty; deleting nothing`,
        );
        blockDeletes = true;
      } else if (totalDeletes > Math.max(20, target.maxShrinkFraction * totalMapped)) {
        warnings.push(
          `${totalDeletes} deletions of ${totalMapped} pushed events exceed the guard; deleting nothing (rerun with force to apply)`,
        );
        blockDeletes = true;
      } else if (retired.length > Math.max(3, target.maxShrinkFraction * (works.length - retired.length))) {
        warnings.push(`${retired.length} calendars left the scope at once; not emptying them`);
        for (const w of retired) w.ops = [];
      }
    }
    if (blockDeletes)
      for (const w of works) {
        w.ops = w.ops.filter((o) => o.kind !== 'delete');
        w.forget = [];
      }

    // --- apply
    if (!dryRun) {
      const adopt = works.flatMap((w) => w.adopt);
      if (adopt.length) await store.upsertPushMappings(adopt);
      for (const w of works)
        if (w.forget.length) await store.deletePushMappings(school.id, target.id, w.spec.key, w.forget);
      await applyOps(works, provider, opts, startedAt, log);
      const reconciledAt = clock().toISOString();
      for (const w of works) {
        if (!w.outcome.reconciled || w.outcome.state !== 'ok' || !w.ref) continue;
        const saved: PushCalendar = {
          schoolId: school.id,
          target: target.id,
          calendarKey: w.spec.key,
          remoteCalendarId: encodeCalendarId(w.ref.owner, w.ref.remoteCalendarId),
          pausedUntil: null,
          lastReconciledAt: reconciledAt,
        };
        await store.savePushCalendar(saved);
      }
      for (const w of works) if (w.outcome.state === 'paused' && w.ref) await pause(w);
      for (const w of works.filter((x) => x.gone)) {
        w.outcome.note =
          'the remote calendar is gone (deleted by hand?): it is created again on the next run';
        note(`${w.spec.key}: ${w.outcome.note}`);
        await store.savePushCalendar({
          schoolId: school.id,
          target: target.id,
          calendarKey: w.spec.key,
          remoteCalendarId: '',
          pausedUntil: null,
          lastReconciledAt: null,
        });
        if (w.mappings.size || w.ops.length)
          await store.deletePushMappings(school.id, target.id, w.spec.key, [
            ...new Set([...w.mappings.keys(), ...w.ops.map((o) => o.identity.sessionId)]),
          ]);
      }
    } else {
      for (const w of works)
        for (const op of w.ops) {
          if (op.kind === 'create') w.outcome.counts.created++;
          else if (op.kind === 'update') w.outcome.counts.updated++;
          else w.outcome.counts.deleted++;
        }
    }
  } catch (err) {
    fatal = err;
    note(`push failed: ${err instanceof Error ? err.message : String(err)}`);
    log.error({ err }, 'push failed');
  }

  async function pause(w: CalendarWork) {
    if (dryRun || !w.ref?.remoteCalendarId) return;
    const minutes = target.provider === 'google' ? target.google.pauseMinutes : 60;
    const until = new Date(clock().getTime() + minutes * 60_000).toISOString();
    w.outcome.note = `paused until ${until} (quota exceeded)`;
    await store.savePushCalendar({
      schoolId: school.id,
      target: target.id,
      calendarKey: w.spec.key,
      remoteCalendarId: encodeCalendarId(w.ref.owner, w.ref.remoteCalendarId),
      pausedUntil: until,
      lastReconciledAt: w.stored?.lastReconciledAt ?? null,
    });
  }

  // --- record
  const finished = clock();
  const totals = emptyCounts();
  const counts: Record<string, RunCounts> = {};
  for (const w of works) {
    const c = w.outcome.counts;
    totals.created += c.created;
    totals.updated += c.updated;
    totals.deleted += c.deleted;
    totals.unchanged += c.unchanged;
    totals.failed += c.failed;
    counts[w.spec.key] = {
      added: c.created,
      changed: c.updated,
      deleted: c.deleted,
      unchanged: c.unchanged,
      skipped: w.outcome.state === 'skipped' || w.outcome.state === 'paused' ? 1 : 0,
      created: c.created,
      updated: c.updated,
      failed: c.failed,
    };
  }
  const pstats = provider.stats();
  const warning = warnings.length ? warnings.join('; ') : null;
  const status: RunStatus =
    fatal || totals.failed > 0 || works.some((w) => w.outcome.state === 'failed')
      ? 'failed'
      : warning
        ? 'suspicious'
        : 'succeeded';
  const summary: PushSummary = {
    runId,
    schoolId: school.id,
    target: target.id,
    provider: target.provider,
    dryRun,
    status,
    startedAt,
    finishedAt: finished.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    window,
    totals,
    calendars: works.map((w) => w.outcome),
    requests: pstats.requests,
    retries: pstats.retries,
    throttled: pstats.throttled,
    errors,
    warning,
  };
  if (runId !== null) {
    await store.finishRun(runId, {
      status,
      finishedAt: summary.finishedAt,
      counts,
      upstreamRequests: pstats.requests,
      retries: pstats.retries,
      throttled: pstats.throttled,
      errors,
      warning,
    });
  }
  log.info(
    { status, ...totals, requests: pstats.requests, throttled: pstats.throttled, ms: summary.durationMs },
    dryRun ? 'push planned' : 'push finished',
  );
  // A real run is recorded as failed and reported through its summary; a dry run has no record to show.
  if (fatal && dryRun) throw fatal;
  return summary;
}

function mappingOf(
  schoolId: SchoolId,
  target: string,
  calendarKey: string,
  sessionId: Id,
  remoteEventId: string,
  contentHash: string,
  at: Instant,
): PushMapping {
  return { schoolId, target, calendarKey, sessionId, remoteEventId, contentHash, updatedAt: at };
}

async function applyOps(
  works: CalendarWork[],
  provider: PushProvider,
  opts: PushOptions,
  at: Instant,
  log: Logger,
): Promise<void> {
  const { store, school, target } = opts;
  const chunkSize = opts.chunkSize ?? 400;
  const all: { w: CalendarWork; op: WriteOp }[] = [];
  // Interleave calendars so every chunk spreads over many calendars (and mailboxes: batches fill up).
  const queues = works.filter((w) => w.ops.length).map((w) => ({ w, ops: [...w.ops] }));
  while (queues.some((q) => q.ops.length))
    for (const q of queues) if (q.ops.length) all.push({ w: q.w, op: q.ops.shift()! });

  const paused = new Set<string>();
  for (let i = 0; i < all.length; i += chunkSize) {
    const chunk = all
      .slice(i, i + chunkSize)
      .filter((x) => !paused.has(x.w.spec.key) && x.w.outcome.state !== 'skipped');
    if (chunk.length === 0) continue;
    // Write-ahead: a create is recorded as pending before it is sent, so a crash leaves a mapping that makes the
    // next run reconcile this calendar instead of trusting the table.
    const pending = chunk
      .filter((x) => x.op.kind === 'create')
      .map((x) =>
        mappingOf(
          school.id,
          target.id,
          x.w.spec.key,
          x.op.identity.sessionId,
          x.op.kind === 'create' ? (x.op.remoteEventId ?? '') : '',
          PENDING,
          at,
        ),
      );
    if (pending.length) await store.upsertPushMappings(pending);
    const results: WriteResult[] = await provider.apply(chunk.map((x) => x.op));
    const upserts: PushMapping[] = [];
    const deletes = new Map<string, Id[]>();
    chunk.forEach(({ w, op }, j) => {
      const r = results[j]!;
      const c = w.outcome.counts;
      if (!r.ok) {
        c.failed++;
        if (r.paused) {
          paused.add(w.spec.key);
          w.outcome.state = 'paused';
        } else if (r.calendarGone) {
          paused.add(w.spec.key);
          w.gone = true;
          w.outcome.state = 'failed';
        } else if (r.skip) {
          w.outcome.state = 'skipped';
        }
        w.outcome.note = r.reason;
        log.warn(
          { calendar: w.spec.key, session: op.identity.sessionId, kind: op.kind, reason: r.reason },
          'push write failed',
        );
        return;
      }
      if (op.kind === 'delete') {
        c.deleted++;
        // Deleting a duplicate of a desired session leaves that session's mapping alone.
        if (!w.desired.has(op.identity.sessionId) && op.identity.sessionId >= 0) {
          const list = deletes.get(w.spec.key) ?? [];
          list.push(op.identity.sessionId);
          deletes.set(w.spec.key, list);
        }
        return;
      }
      if (op.kind === 'create' && !r.adopted) c.created++;
      else c.updated++;
      upserts.push(
        mappingOf(
          school.id,
          target.id,
          w.spec.key,
          op.identity.sessionId,
          r.remoteEventId ?? '',
          op.rendered.hash,
          at,
        ),
      );
    });
    if (upserts.length) await store.upsertPushMappings(upserts);
    for (const [key, ids] of deletes) await store.deletePushMappings(school.id, target.id, key, ids);
  }
  const failed = works.reduce((n, w) => n + w.outcome.counts.failed, 0);
  for (const w of works) if (w.outcome.counts.failed && w.outcome.state === 'ok') w.outcome.state = 'failed';
  if (failed) log.warn({ failed }, 'some push writes failed');
}
