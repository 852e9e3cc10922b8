// The clean internal model of a school's extracurricular data.
// The upstream client normalises every API quirk into these shapes; the store persists them; the projection,
// feeds, rosters and pushes read them. Nothing downstream of the client sees a raw API record.
//
// Conventions: ids are numbers; instants are ISO 8601 strings in UTC with milliseconds
// (`2026-11-22T09:30:00.000Z`); optional upstream facts are `null`, never `undefined`.

export type Id = number;
/** ISO 8601 instant in UTC, always `YYYY-MM-DDTHH:mm:ss.sssZ`. */
export type Instant = string;

export interface Ref {
  id: Id;
  name: string;
}

export interface Department extends Ref {}

export interface YearGroup extends Ref {
  archived: boolean;
}

export interface Activity extends Ref {
  code: string | null;
  emoji: string | null;
  archived: boolean;
  hexColor: string | null;
  smsCode: string | null;
  activityType: string | null;
  rollMode: 'present' | 'absent' | null;
  department: Ref | null;
}

export interface LocationOwner {
  id: Id;
  name: string;
  acronym: string | null;
  shortName: string | null;
}

export interface Location extends Ref {
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  archived: boolean;
}

export interface Student {
  id: Id;
  firstName: string;
  legalFirstName: string | null;
  lastName: string;
  sisId: string | null;
  secondarySisId: string | null;
  yearGroupId: Id | null;
  /** false for students listed with `current=false` (left the school). */
  current: boolean;
}

export interface StaffUser {
  id: Id;
  firstName: string;
  lastName: string;
  email: string | null;
  mobileNumber: string | null;
  isAdmin: boolean;
  isManager: boolean;
  /** true when the user is deactivated (`frozen` "yes" or true upstream). */
  frozen: boolean;
  sisId: string | null;
  externalId: string | null;
  secondaryExternalId: string | null;
  activityIds: Id[];
  departmentIds: Id[];
}

export interface TeamPosition extends Ref {
  numberOfSlots: number | null;
}

export interface TeamStaff {
  id: Id;
  firstName: string;
  lastName: string;
  sisId: string | null;
}

export interface Guardian {
  name: string;
  relationship: string | null;
  email: string | null;
  phone: string | null;
}

export interface TeamMember {
  studentId: Id;
  firstName: string;
  legalFirstName: string | null;
  lastName: string;
  smsId: string | null;
  yearGroup: Ref | null;
  boarder: boolean;
  captain: boolean;
  jerseyNumber: string | null;
  positionId: Id | null;
  sortOrder: number | null;
  /** Only on single-team reads; medical and contact data is staff-only and printed only where a roster template asks. */
  medicalConditions: string[];
  guardians: Guardian[];
  /** Single-team reads only: the service's own "absent today" mark (as of the pull), with its reason. */
  absentToday?: boolean;
  absentReason?: string | null;
}

export interface Team extends Ref {
  sisId: string | null;
  hidden: boolean;
  playersRanked: boolean;
  category: (Ref & { sortOrder?: number | null }) | null;
  subcategory: Ref | null;
  activity: Ref & { sisCode: string | null; department: Ref | null };
  staff: TeamStaff[];
  students: TeamMember[];
  positions: TeamPosition[];
  studentSortType: string | null;
}

export interface StudentTeam {
  id: Id;
  studentId: Id;
  teamId: Id;
  start: Instant | null;
  /** null while the student is still in the team. */
  end: Instant | null;
}

export type FixtureStatus = 'confirmed' | 'unconfirmed' | 'draft';
/** Upstream `W`, `L`, `D`, `F` (we forfeited), `OF` (opponent forfeited), `NR` (no result). */
export type FixtureResult = 'win' | 'loss' | 'draw' | 'forfeit' | 'opponent-forfeit' | 'no-result';

export type CustomFieldDataType = 'short-text' | 'time' | 'single-select' | 'staff' | 'student';
export type UserType = 'admin' | 'manager' | 'staff' | 'guardian' | 'student';

export interface CustomFieldMeta {
  key: string;
  label: string;
  dataType: CustomFieldDataType;
  showToUserTypes: UserType[];
  showAfterField: string | null;
}

/** `short-text`, `single-select`, `time` (`HH:mm` school-local) are strings; `staff`/`student` are id lists. */
export type CustomFieldValue = string | Id[];
export type CustomFieldsData = Record<string, CustomFieldValue>;

export interface SessionTeam extends Ref {
  category: (Ref & { sortOrder: number | null }) | null;
  subcategory: Ref | null;
  customFieldsData: CustomFieldsData;
}

/**
 * A student listed on a session: who, and nothing else. Names, SIS ids and year groups are the students table's
 * (and a roster's team members'); the listing repeats them in each of a school's ~5,000 sessions, which made up
 * over half of the stored sessions and no output printed them.
 */
export interface SessionStudent {
  id: Id;
}

export interface SessionStaff {
  id: Id;
  firstName: string;
  lastName: string;
  sisId: string | null;
  externalId: string | null;
}

export interface SessionLocation {
  id: Id | null;
  name: string;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  owner: LocationOwner | null;
}

export interface Session {
  id: Id;
  title: string;
  notes: string;
  studentParentNotes: string;
  opponent: string | null;
  bye: boolean;
  cancelled: boolean;
  /** true: a Fixture. */
  scored: boolean;
  hexColor: string | null;
  start: Instant;
  end: Instant;
  creatorUserId: Id | null;
  seriesId: Id | null;
  /** Scores arrive as numbers or strings; kept as the text to print. */
  organisationScore: string | null;
  opponentScore: string | null;
  result: FixtureResult | null;
  remindStaff: boolean;
  status: FixtureStatus;
  optional: boolean;
  roundName: string | null;
  activity: Ref & { department: Ref | null; hexColor: string | null };
  location: SessionLocation | null;
  teams: SessionTeam[];
  students: SessionStudent[];
  staff: SessionStaff[];
  /** Session-level custom fields (single-session reads); list reads carry them per team. */
  customFieldsData: CustomFieldsData;
}

export interface PreExplainedAbsence {
  id: Id;
  studentId: Id;
  start: Instant;
  end: Instant;
  explained: boolean;
  reason: string;
}
