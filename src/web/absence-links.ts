// Which children a calendar link may report absences for, and the page's share of it: only a child's own feed link
// (scope student) or a family link, through the members that still stand (a member whose own link was rotated
// drops out). Team, activity and staff links name no single child and offer nothing.
import type { Request, Response } from 'express';
import { familyLabel } from '../calendar/family.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { FamilyAbsences, ReportingLink } from '../families/absences.ts';
import type { FamilyFeed } from '../feeds/family.ts';
import { hashToken } from '../feeds/tokens.ts';
import type { FeedToken, Store } from '../store/types.ts';
import { DONE_WORDS, type Done, formToken, type LandingAbsences } from './absence-form.ts';

/** A child's feed link as a reporting link; null for any other scope. */
export async function childLink(
  store: Pick<Store, 'records'>,
  record: FeedToken,
  feed: { def: { subject: string }; upcoming: readonly CalendarEvent[] },
): Promise<ReportingLink | null> {
  if (record.scope !== 'student') return null;
  const student = await store.records.get(record.schoolId, 'students', record.scopeId);
  if (!student) return null;
  return {
    schoolId: record.schoolId,
    kind: 'child',
    tokenHash: record.tokenHash,
    children: [
      { studentId: record.scopeId, label: familyLabel(student.firstName.trim() || feed.def.subject) },
    ],
    shown: new Set(feed.upcoming.map((e) => e.sessionId)),
  };
}

/** A family link as a reporting link (its children that still stand; possibly none). */
export function familyLink(token: string, feed: FamilyFeed): ReportingLink {
  return {
    schoolId: feed.schoolId,
    kind: 'family',
    tokenHash: hashToken(token),
    children: feed.members
      .filter((m) => m.scope === 'student')
      .map((m) => ({ studentId: m.scopeId, label: m.label })),
    shown: new Set(feed.upcoming.map((e) => e.sessionId)),
  };
}

/**
 * The landing page's "Can't make it?" parts for this link, or undefined when it offers nothing (not wired, off for
 * the school, not a child's or family link).
 */
export async function landingAbsences(
  req: Request,
  res: Response,
  opts: { absences?: FamilyAbsences | undefined; publicUrl: string },
  pageUrl: string,
  link: () => Promise<ReportingLink | null> | ReportingLink | null,
  events: readonly CalendarEvent[] = [],
): Promise<LandingAbsences | undefined> {
  if (!opts.absences) return undefined;
  const reporting = await link();
  if (!reporting) return undefined;
  const view = await opts.absences.view(reporting, [...reporting.shown]);
  if (!view) return undefined;
  const asked = req.query.done;
  const done = typeof asked === 'string' && Object.hasOwn(DONE_WORDS, asked) ? (asked as Done) : null;
  const at = req.query.session;
  const doneSession = typeof at === 'string' && /^\d{1,15}$/.test(at) ? Number(at) : null;
  return {
    doneSession: doneSession !== null && reporting.shown.has(doneSession) ? doneSession : null,
    view,
    action: `${pageUrl}/absences`,
    csrf: formToken(req, res, opts.publicUrl.startsWith('https:')),
    family: reporting.kind === 'family',
    done,
    events: new Map(events.map((e) => [e.sessionId, e])),
  };
}
