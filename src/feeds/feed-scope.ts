// Which sessions a feed (or a pushed calendar) of a scope includes: the one definition, `scopesOf`. A session
// belongs to each of its teams, its activity and its assigned staff, and to each student it lists or who is on the
// current roster of one of its teams (a live team: the projection context's teamStudents). The window (sessions
// that intersect it, deleted ones left out) is the store's read.
//
// Three readers, one rule: the school re-render and the push engine read the window once and group it
// (`ScopeIndex`); a feed rendered on request reads only its candidates through the store's indexes
// (`candidateQuery`) and keeps those the rule includes (`inScope`). Both keep the store's order (start, id).
import type { Id, Instant } from '../domain/types.ts';
import type { FeedScope, SessionQuery, Stored } from '../store/types.ts';

type Session = Stored<'sessions'>;

/** Each live team's current students (ProjectionContext.teamStudents). */
export type TeamRosters = ReadonlyMap<Id, ReadonlySet<Id>>;

const key = (scope: FeedScope, id: Id) => `${scope}:${id}`;

/** Every scope (as `scope:id`) whose feed includes the session. */
export function scopesOf(s: Session, rosters: TeamRosters): Set<string> {
  const out = new Set<string>([key('activity', s.activity.id)]);
  for (const t of s.teams) {
    out.add(key('team', t.id));
    for (const student of rosters.get(t.id) ?? []) out.add(key('student', student));
  }
  for (const p of s.staff) out.add(key('staff', p.id));
  for (const p of s.students) out.add(key('student', p.id));
  return out;
}

/**
 * The window's sessions grouped by the scopes that include them, each group in the order added (the window's).
 * Added one at a time, so a long window can be grouped with the event loop's turns between sessions.
 */
export class ScopeIndex {
  readonly #rosters: TeamRosters;
  readonly #groups = new Map<string, Session[]>();

  constructor(rosters: TeamRosters) {
    this.#rosters = rosters;
  }

  add(s: Session): void {
    for (const k of scopesOf(s, this.#rosters)) {
      const list = this.#groups.get(k);
      if (list) list.push(s);
      else this.#groups.set(k, [s]);
    }
  }

  of(scope: FeedScope, id: Id): Session[] {
    return this.#groups.get(key(scope, id)) ?? [];
  }
}

/** The sessions among `candidates` that the scope includes, in their order. */
export function inScope(
  scope: FeedScope,
  id: Id,
  candidates: readonly Session[],
  rosters: TeamRosters,
): Session[] {
  const k = key(scope, id);
  return candidates.filter((s) => scopesOf(s, rosters).has(k));
}

/**
 * The store's read of one scope's candidates in the window, narrowed by its indexes (a session's teams, staff,
 * students, activity). `inScope` decides; test/feeds/scope-paths.test.ts holds the two equal for every feed.
 */
export function candidateQuery(scope: FeedScope, scopeId: Id, from: Instant, to: Instant): SessionQuery {
  switch (scope) {
    case 'team':
      return { from, to, teamIds: [scopeId] };
    case 'student':
      return { from, to, studentId: scopeId };
    case 'staff':
      return { from, to, staffId: scopeId };
    case 'activity':
      return { from, to, activityIds: [scopeId] };
  }
}
