// A family's act against the upstream: its own short budget, and what a failure means for the write.
//
// A person waits on the answer, behind a reverse proxy that gives up after ~60 s: each request of an act gets
// FAMILY_REQUEST_TIMEOUT_MS and no retry (not the pull's 30-s timeout and 1-2-4-…-32 s schedule, nor a 429's
// Retry-After, however long), so an act ends within 10 s whatever the upstream does. What a failed write means is
// decided here: refused or never reached (nothing was written), or unknown (a 5xx, a cut, a timeout, a 2xx whose
// body was cut: the upstream may have applied it, so it is read back later by the mark rostercal writes).
import { overlaps } from '../calendar/absences.ts';
import type { SchoolConfig } from '../config.ts';
import { familyReportOf } from '../domain/family-absence.ts';
import type { Id, PreExplainedAbsence } from '../domain/types.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { createUpstreamClient } from '../upstream/client.ts';
import { RateLimitedError, UnreachableError, UpstreamError } from '../upstream/errors.ts';

/** One request of a family's act: two of them (the read, then the write) and the store's steps fit in 10 s. */
export const FAMILY_REQUEST_TIMEOUT_MS = 3_500;

/** The upstream client a school's family acts use: the school's address and token, the short budget. */
export function familyClient(school: SchoolConfig): UpstreamClient {
  return createUpstreamClient({
    baseUrl: school.upstream.url,
    token: school.upstream.token,
    timeoutMs: Math.min(FAMILY_REQUEST_TIMEOUT_MS, school.upstream.timeoutMs ?? FAMILY_REQUEST_TIMEOUT_MS),
    backoff: { maxRetries: 0, maxRetryAfterMs: 0 },
    userAgent: 'rostercal (family act)',
  });
}

/** Clients per school, made once (their pacing holds across acts). */
export function familyClients(): (school: SchoolConfig) => UpstreamClient {
  const made = new Map<string, UpstreamClient>();
  return (school) => {
    let c = made.get(school.id);
    if (!c) {
      c = familyClient(school);
      made.set(school.id, c);
    }
    return c;
  };
}

/**
 * What a failed write means: 'not-made' when the upstream refused it (4xx, 429 included) or was never reached
 * (connection refused, no such host); 'unknown' when it may have applied it.
 */
export function writeOutcome(err: unknown): 'not-made' | 'unknown' {
  if (!(err instanceof UpstreamError)) return 'unknown';
  if (err instanceof UnreachableError || err instanceof RateLimitedError) return 'not-made';
  return err.status !== null && err.status >= 400 && err.status < 500 ? 'not-made' : 'unknown';
}

/** The child's absences upstream that overlap a time range (one short read). */
export async function absencesUpstream(
  client: UpstreamClient,
  studentId: Id,
  range: { start: string; end: string },
): Promise<PreExplainedAbsence[]> {
  const out: PreExplainedAbsence[] = [];
  for await (const page of client.preExplainedAbsences({
    studentIds: [studentId],
    startDateTime: range.start,
    endDateTime: range.end,
  }))
    for (const a of page.records) if (a.studentId === studentId && overlaps(a, range)) out.push(a);
  return out;
}

/** Of a child's absences, those a calendar page reported (through the link `linkId`, when given). */
export function markedBy(list: readonly PreExplainedAbsence[], linkId?: string): PreExplainedAbsence[] {
  return list.filter((a) => {
    const mark = familyReportOf(a);
    return mark !== null && (linkId === undefined || mark.linkId === linkId);
  });
}
