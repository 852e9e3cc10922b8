export { absencesOverlapping, absenceWords, overlaps, whyOut } from './absences.ts';
export type { FeedScopeRef, ProjectionContext, SchoolInfo } from './context.ts';
export {
  createProjectionContext,
  inferLocationOwnerIds,
  loadProjectionContext,
  loadSchoolInfo,
  personName,
} from './context.ts';
export type { HomeOrAway, SessionDecision } from './decision.ts';
export { decideSession, formatResult, homeOrAway, isFixture } from './decision.ts';
export type { ProjectableSession } from './project.ts';
export {
  audienceMaySee,
  familyFacts,
  normaliseHexColor,
  orderCustomFields,
  projectSession,
} from './project.ts';
export { roundLine, roundValue } from './round.ts';
export type { EventTemplates } from './templates.ts';
export { DEFAULT_TEMPLATE_DIR, loadEventTemplates } from './templates.ts';
export { sessionTimeRange, sessionTimeRangeZoned } from './times.ts';
export type { Audience, CalendarEvent } from './types.ts';
export { eventUid } from './uid.ts';
