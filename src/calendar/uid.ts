// Event UIDs. An ICS UID must be stable across renders (clients match updates by it) and unique in the
// client's store. Calendar apps do not keep UIDs apart per subscribed calendar reliably: Google Calendar in
// particular shows an event whose UID it already holds in another calendar in only one of them. A parent who
// subscribes to their child's feed and to the team feed would lose events. So the UID carries the feed scope:
// `session-<sessionId>-<scope>-<scopeId>@<domain>`; without a scope (pushes, which keep their own remote ids) it
// is `session-<sessionId>@<domain>`. Audience is implied by the scope. The domain is
// `<schoolId>.<installation>.rostercal`: two installations, or two schools whose upstreams reuse ids, would
// otherwise publish the same UIDs. An installation whose UIDs predate that keeps `<schoolId>.rostercal`
// (changing them would give every subscriber every event twice over); see src/calendar/README.md.
import type { Id } from '../domain/types.ts';
import type { FeedScopeRef, SchoolInfo } from './context.ts';

/** School ids come from configuration; keep the UID's domain part to characters every parser accepts. */
function domainSafe(part: string): string {
  return part.toLowerCase().replace(/[^a-z0-9.-]+/g, '-') || 'school';
}

/** The part after `@` of every UID of a school's events. */
export function uidDomain(school: Pick<SchoolInfo, 'id' | 'uidDomain'>): string {
  const installation = school.uidDomain ? `.${domainSafe(school.uidDomain)}` : '';
  return `${domainSafe(school.id)}${installation}.rostercal`;
}

export function eventUid(
  school: Pick<SchoolInfo, 'id' | 'uidDomain'>,
  sessionId: Id,
  scope?: FeedScopeRef,
): string {
  const local = scope ? `session-${sessionId}-${scope.scope}-${scope.id}` : `session-${sessionId}`;
  return `${local}@${uidDomain(school)}`;
}
