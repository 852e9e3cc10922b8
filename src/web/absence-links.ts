// Which children a calendar link may report absences for, and the page's share of it: only a child's own feed link
// (scope student) or a family link, through the members that still stand (a member whose own link was rotated
// drops out). Team, activity and staff links name no single child and offer nothing.
import type { Request, Response } from 'express';
import { familyLabel } from '../calendar/family.ts';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { AbsenceView, FamilyAbsences, ReportingLink } from '../families/absences.ts';
import type { FamilyFeed } from '../feeds/family.ts';
import { hashToken } from '../feeds/tokens.ts';
import type { FeedToken, SchoolId, Store } from '../store/types.ts';
import { isStoreUnreachable } from '../store/unreachable.ts';
import { doneOf, saidOf } from './absence-done.ts';
import { formToken, type LandingAbsences } from './absence-form.ts';

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

/** The page a link's "Can't make it?" parts are for, as known without the store. */
export interface AbsencePage {
  schoolId: SchoolId;
  /** A child's own link, or a family link with a child in it: one that may report. */
  reports: boolean;
  now: Date;
}

/**
 * The landing page's "Can't make it?" parts for this link, or undefined when it offers nothing (not wired, off for
 * the school, not a child's or family link). While the store cannot be read, a page that would offer it says so
 * where its forms would be, and what was just done is not asserted: the store's errors otherwise reach the caller.
 */
export async function landingAbsences(
  req: Request,
  res: Response,
  opts: { absences?: FamilyAbsences | undefined; publicUrl: string },
  pageUrl: string,
  link: () => Promise<ReportingLink | null> | ReportingLink | null,
  events: readonly CalendarEvent[],
  page: AbsencePage,
): Promise<LandingAbsences | undefined> {
  const absences = opts.absences;
  if (!absences) return undefined;
  let view: AbsenceView | null;
  let family = false;
  try {
    const reporting = await link();
    view = reporting && (await absences.view(reporting, [...reporting.shown]));
    if (!view) return undefined;
    family = reporting?.kind === 'family';
  } catch (err) {
    if (!isStoreUnreachable(err) || !page.reports || !absences.offered(page.schoolId)) throw err;
    view = null;
  }
  const at = req.query.session;
  const listed = typeof at === 'string' && /^\d{1,15}$/.test(at) ? Number(at) : null;
  const doneSession = listed !== null && events.some((e) => e.sessionId === listed) ? listed : null;
  return {
    doneSession,
    view,
    ...(view ? {} : { noteAt: reportableAt(events, page.now) }),
    said: saidOf(doneOf(req.query.done), doneSession, view),
    action: `${pageUrl}/absences`,
    csrf: formToken(req, res, opts.publicUrl.startsWith('https:')),
    family,
    events: new Map(events.map((e) => [e.sessionId, e])),
  };
}

/** The listed sessions a form could be on (not begun, not cancelled, not a bye), as the page's events say. */
function reportableAt(events: readonly CalendarEvent[], now: Date): Set<Id> {
  return new Set(
    events
      .filter((e) => e.status !== 'cancelled' && !e.noGame && Date.parse(e.start) > now.getTime())
      .map((e) => e.sessionId),
  );
}
