// Event UIDs. An ICS UID must be stable across renders (clients match updates by it) and unique in the
// client's store. Calendar apps do not keep UIDs apart per subscribed calendar reliably: Google Calendar in
// particular shows an event whose UID it already holds in another calendar in only one of them. A parent who
// subscribes to their child's feed and to the team feed would lose events. So the UID carries the feed scope:
// `session-<sessionId>-<scope>-<scopeId>@<schoolId>.rostercal`; without a scope (pushes, which keep their own
// remote ids) it is `session-<sessionId>@<schoolId>.rostercal`. Audience is implied by the scope.
import type { Id } from '../domain/types.ts';
import type { SchoolId } from '../store/types.ts';
import type { FeedScopeRef } from './context.ts';

/** School ids come from configuration; keep the UID's domain part to characters every parser accepts. */
function domainSafe(schoolId: SchoolId): string {
  return schoolId.toLowerCase().replace(/[^a-z0-9.-]+/g, '-') || 'school';
}

export function eventUid(schoolId: SchoolId, sessionId: Id, scope?: FeedScopeRef): string {
  const local = scope ? `session-${sessionId}-${scope.scope}-${scope.id}` : `session-${sessionId}`;
  return `${local}@${domainSafe(schoolId)}.rostercal`;
}
