// What a session is, decided once for every output: home, away or neutral; cancelled, and why; its times on the
// school's clock; its result; its title in the school's wording. Feeds, Google and Outlook (through
// projectSession), landing and family pages, /staff, PDFs and `rostercal sessions` render this decision and
// derive none of it themselves: a roster once said "(away)" for a home game the families' calendars called home.
import type { FixtureStatus, Id, Instant, Session } from '../domain/types.ts';
import type { FeedScopeRef, ProjectionContext, SchoolInfo } from './context.ts';
import { CAPS, capText, throughGate, voiceFor } from './gate.ts';
import { fill } from './templates.ts';
import { sessionDate, sessionTimeRange } from './times.ts';
import type { Audience, CalendarEvent } from './types.ts';

/** Where a fixture is played: at one of the school's own venues, someone else's, or unknown (neutral wording). */
export type HomeOrAway = 'home' | 'away' | null;

export interface SessionDecision {
  sessionId: Id;
  start: Instant;
  end: Instant;
  /** The school's IANA zone. */
  timeZone: string;
  /** The day it starts on the school's calendar, `YYYY-MM-DD` (not the UTC date of its start). */
  date: string;
  /** The school's wall clock (`sessionTimeRange`): "15:30–16:30", "02:30 AEDT–02:30 AEST" across a change. */
  time: string;
  where: HomeOrAway;
  fixture: boolean;
  /** A bye: the team has no game, so there is nothing to attend (no meet time, no absence to report). */
  bye: boolean;
  cancelled: boolean;
  /** Why, in the school's words as the audience may read them (the parent note without "cancelled."); or null. */
  cancellationReason: string | null;
  /** Calendar status (ICS STATUS, pushes' free/busy). */
  status: CalendarEvent['status'];
  /** What a list of sessions says of it: cancelled, or the upstream status. */
  state: 'cancelled' | FixtureStatus;
  /** "Won 3–1", "Lost by forfeit"…; null without a result. */
  result: string | null;
  /** The event's title for the audience and feed scope: "Cancelled: U15 Football vs St Mary's (home) – Won 3–1". */
  title: string;
}

/** The decision without the wall-clock text, which the feeds (instants and VTIMEZONE) have no use for. */
export type SessionFacts = Omit<SessionDecision, 'time' | 'date'>;

/**
 * What the session is for `audience` (in `scope`'s feed: its team's name in the title, its student's own name
 * kept). Reads text only through the gate (gate.ts), like projectSession; home or away from the raw venue owner.
 */
export function decideSession(
  raw: Session,
  ctx: ProjectionContext,
  audience: Audience,
  scope?: FeedScopeRef,
): SessionDecision {
  const keep = scope?.scope === 'student' ? scope.id : null;
  const facts = decideGated(raw, throughGate(raw, voiceFor(ctx, audience, keep, raw)), ctx, scope);
  return {
    ...facts,
    date: sessionDate(raw.start, ctx.school.timeZone),
    time: sessionTimeRange(raw.start, raw.end, ctx.school.timeZone),
  };
}

/** The decision from the session as the audience reads it (`session`, already through the gate) and `raw`. */
export function decideGated(
  raw: Session,
  session: Session,
  ctx: ProjectionContext,
  scope: FeedScopeRef | undefined,
): SessionFacts {
  const result = formatResult(session, ctx);
  const where = homeOrAway(raw, ctx.school);
  const cancelled = session.cancelled;
  return {
    sessionId: session.id,
    start: session.start,
    end: session.end,
    timeZone: ctx.school.timeZone,
    where,
    fixture: isFixture(session),
    bye: session.bye,
    cancelled,
    cancellationReason: cancelled ? withoutCancellationNotice(session.studentParentNotes) || null : null,
    status: cancelled ? 'cancelled' : session.status === 'confirmed' ? 'confirmed' : 'tentative',
    state: cancelled ? 'cancelled' : session.status,
    result,
    title: capText(buildTitle(session, ctx, scope, result, where), CAPS.title),
  };
}

const CANCELLATION_NOTICE =
  /^(?:(?:this|the|today'?s|tonight'?s)\s+)?(?:session|training|practice|rehearsal|game|match|fixture|event|class|lesson|meeting)?\s*(?:is|has been|was|will be)?\s*(?:now\s+)?cancell?ed\s*[.!]*$/i;

/** The note without sentences that only announce the cancellation. */
export function withoutCancellationNotice(notes: string): string {
  return notes
    .split(/(?<=[.!?])\s+|\n+/)
    .map((x) => x.trim())
    .filter((x) => x && !CANCELLATION_NOTICE.test(x))
    .join(' ')
    .trim();
}

export function isFixture(s: Session): boolean {
  return s.scored || s.bye || (s.opponent?.trim() ?? '') !== '';
}

function teamLabel(session: Session, scope: FeedScopeRef | undefined): string {
  if (scope?.scope === 'team') {
    const own = session.teams.find((x) => x.id === scope.id);
    if (own) return own.name.trim();
  }
  return session.teams
    .map((x) => x.name.trim())
    .filter(Boolean)
    .join(' & ');
}

function buildName(session: Session, ctx: ProjectionContext, scope: FeedScopeRef | undefined): string {
  const t = ctx.templates.name;
  const activity = session.activity.name.trim();
  const team = teamLabel(session, scope);
  if (!team) return fill(t.noTeam, { activity, title: session.title.trim() || activity });
  // A blank activity is included in any name (''): it adds nothing (activityAndTeam would start with a space).
  const teamSaysAll = team.toLocaleLowerCase().includes(activity.toLocaleLowerCase());
  return fill(teamSaysAll ? t.teamOnly : t.activityAndTeam, { activity, team });
}

const loose = (s: string) => s.toLocaleLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The school's own title, carrying the team's name: "Intermediate Basketball A Training" stays as it is, a
 * one-off "Grand Final" becomes "U15 Football: Grand Final" (template name.teamAndTitle). A title that says
 * less than the team's name ("Football" for "U15 Football") or none at all gives the team's name.
 */
function buildNamed(session: Session, ctx: ProjectionContext, scope: FeedScopeRef | undefined): string {
  const title = session.title.trim();
  const team = teamLabel(session, scope);
  if (!team)
    return fill(ctx.templates.name.noTeam, {
      activity: session.activity.name.trim(),
      title: title || session.activity.name.trim(),
    });
  const teamNames = [team, ...session.teams.map((x) => x.name.trim())].filter(Boolean).map(loose);
  if (!title || teamNames.some((n) => n.includes(loose(title)))) return buildName(session, ctx, scope);
  if (teamNames.some((n) => loose(title).includes(n))) return title;
  return fill(ctx.templates.name.teamAndTitle, { activity: session.activity.name.trim(), team, title });
}

/**
 * 'home' when the venue's owner is one of the school's location owners, 'away' when it is someone else, null
 * (neutral wording) when the venue has no owner or the school's owners are unknown. Names are never compared
 * here: which owners are the school is decided once (loadSchoolInfo), for every output.
 */
export function homeOrAway(session: Session, school: SchoolInfo): 'home' | 'away' | null {
  const owner = session.location?.owner;
  if (!owner || !school.locationOwnerIds?.length) return null;
  return school.locationOwnerIds.includes(owner.id) ? 'home' : 'away';
}

function buildTitle(
  session: Session,
  ctx: ProjectionContext,
  scope: FeedScopeRef | undefined,
  resultText: string | null,
  where: 'home' | 'away' | null,
): string {
  const t = ctx.templates.title;
  const name = buildName(session, ctx, scope);
  const named = buildNamed(session, ctx, scope);
  const values = {
    named,
    name,
    activity: session.activity.name.trim(),
    team: teamLabel(session, scope),
    title: session.title.trim(),
    opponent: session.opponent?.trim() ?? '',
  };
  let title: string;
  if (session.bye) title = fill(t.bye, values);
  else if (isFixture(session)) {
    if (!values.opponent) title = fill(t.fixtureNoOpponent, values);
    else {
      // The school's title often names the opponent already ("U15 Football vs St Mary's"): not twice.
      title = loose(named).includes(loose(values.opponent))
        ? fill(
            where === 'home' ? t.fixtureNamedHome : where === 'away' ? t.fixtureNamedAway : t.fixtureNamed,
            values,
          )
        : fill(where === 'home' ? t.fixtureHome : where === 'away' ? t.fixtureAway : t.fixture, values);
    }
  } else title = fill(t.session, values);
  if (resultText) title = fill(t.withResult, { title, result: resultText });
  if (session.status === 'draft') title = fill(t.draft, { title });
  else if (session.status === 'unconfirmed') title = fill(t.unconfirmed, { title });
  if (session.cancelled) title = fill(t.cancelled, { title });
  return title;
}

function score(s: string | null): string | null {
  const v = s?.trim();
  return v ? v : null;
}

/** "Won 3–1", "Lost by forfeit", …; null when the fixture has no result yet (or is not a fixture). */
export function formatResult(session: Session, ctx: ProjectionContext): string | null {
  if (!isFixture(session) || session.bye) return null;
  const r = ctx.templates.result;
  const us = score(session.organisationScore);
  const them = score(session.opponentScore);
  const scores = us !== null && them !== null ? { us, them } : null;
  let result = session.result;
  if (result === null && scores) {
    const a = Number(us);
    const b = Number(them);
    if (Number.isFinite(a) && Number.isFinite(b)) result = a > b ? 'win' : a < b ? 'loss' : 'draw';
  }
  switch (result) {
    case 'win':
      return scores ? fill(r.win, scores) : r.winNoScore;
    case 'loss':
      return scores ? fill(r.loss, scores) : r.lossNoScore;
    case 'draw':
      return scores ? fill(r.draw, scores) : r.drawNoScore;
    case 'forfeit':
      return fill(r.forfeit, { us: us ?? '', them: them ?? '' });
    case 'opponent-forfeit':
      return fill(r.opponentForfeit, { us: us ?? '', them: them ?? '' });
    case 'no-result':
      return r.noResult;
    default:
      return null;
  }
}
