// The sandbox's in-memory school: close to the wire records, plus what the service keeps to itself
// (`updatedAt` per record, membership and assignment dates, whether a user is integration-synced).
// Instants are epoch milliseconds here and become ISO 8601 UTC strings on the wire.

export type Scale = 'small' | 'school' | 'district';

export interface Organisation {
  id: number;
  name: string;
  acronym: string;
  shortName: string;
  state: string;
}

export interface SDepartment {
  id: number;
  name: string;
}

export interface SYearGroup {
  id: number;
  name: string;
  archived: boolean;
}

export interface SActivity {
  id: number;
  name: string;
  code: string;
  emoji: string;
  archived: boolean;
  timesheetsEnabled: boolean;
  hexColor: string;
  hexContrastColor: string;
  /** The numeric colour the list example carries (the hex colour as an integer). */
  colour: number;
  smsCode: string;
  rollMode: 'present' | 'absent';
  activityType: string;
  description: string;
  archivedByUserId: number | null;
  archivedTimestamp: number | null;
  departmentId: number;
  moveStudentsWithoutApproval: boolean;
  /** sport, music, drama, club… drives team shapes and session titles. */
  kind: ActivityKind;
}

export type ActivityKind = 'sport' | 'music' | 'drama' | 'club' | 'outdoor' | 'service';

export interface SLocation {
  id: number;
  name: string;
  address: string | null;
  latitude: number | null;
  longitude: number | null;
  archived: boolean;
  ownerId: number;
  subLocations: { id: number; name: string }[] | null;
  /** Defined by an association (opponents' venues): used by sessions, never listed by `GET /locations`. */
  association: boolean;
}

export interface SUser {
  id: number;
  firstName: string;
  lastName: string;
  email: string;
  mobileNumber: string | null;
  isAdmin: boolean;
  isManager: boolean;
  employeeId: string | null;
  frozen: boolean;
  wwccNumber: string | null;
  wwccExpiryDate: number | null;
  updatedDetails: boolean;
  sisId: string | null;
  externalId: string | null;
  secondaryExternalId: string | null;
  payment: 'ts' | 'na';
  inviteEmailLastSentTimestamp: number | null;
  activityIds: number[];
  departmentIds: number[];
  /** Synced by an active integration: its external identifiers cannot be changed (422). */
  integrationSynced: boolean;
  updatedAt: number;
}

export interface SGuardian {
  id: number;
  firstName: string;
  lastName: string;
  relationship: string;
  email: string;
  mobileNumber: string;
}

export interface SMedicalCondition {
  id: number;
  name: string;
  notes: string | null;
}

export interface SStudent {
  id: number;
  firstName: string;
  legalFirstName: string | null;
  lastName: string;
  sisId: string;
  secondarySisId: string | null;
  yearGroupId: number;
  current: boolean;
  email: string;
  gender: string | null;
  boarder: boolean;
  culture: string;
  guardians: SGuardian[];
  medicalConditions: SMedicalCondition[];
}

export interface SCategory {
  id: number;
  name: string;
  sortOrder: number;
}

export interface SPosition {
  id: number;
  name: string;
  numberOfSlots: number;
}

export interface SStaffAssignment {
  userId: number;
  start: number | null;
  end: number | null;
}

export interface STeam {
  id: number;
  name: string;
  sisId: string;
  hidden: boolean;
  playersRanked: boolean;
  categoryId: number | null;
  subcategory: { id: number; name: string } | null;
  activityId: number;
  staff: SStaffAssignment[];
  positions: SPosition[];
  studentSortType: string;
  updatedAt: number;
}

/** A student-team membership; the roster facts (captain, jersey, position) live on it. */
export interface SMembership {
  id: number;
  studentId: number;
  teamId: number;
  start: number | null;
  end: number | null;
  captain: boolean;
  jerseyNumber: string;
  positionId: number | null;
  sortOrder: number;
}

export type CustomFieldValue = string | number[];

export interface SCustomField {
  key: string;
  label: string;
  dataType: 'short-text' | 'time' | 'single-select' | 'staff' | 'student';
  showToUserTypes: ('admin' | 'manager' | 'staff' | 'guardian' | 'student')[];
  showAfterField: string | null;
}

export interface SSession {
  id: number;
  title: string;
  notes: string;
  studentParentNotes: string;
  opponent: string | null;
  opponentTeam: string | null;
  opponentOrganisation: string | null;
  bye: boolean;
  cancelled: boolean;
  scored: boolean;
  hexColor: string;
  start: number;
  end: number;
  creatorUserId: number;
  seriesId: number;
  organisationScore: number | null;
  opponentScore: number | null;
  result: 'W' | 'L' | 'D' | 'F' | 'OF' | 'NR' | null;
  resultNotes: string | null;
  roundName: string | null;
  remindStaff: boolean;
  status: 'confirmed' | 'unconfirmed' | 'draft';
  optional: boolean;
  activityId: number;
  locationId: number | null;
  teamIds: number[];
  /** Students put on the session directly (`studentIds` in writes), besides the teams' members. */
  extraStudentIds: number[];
  staffIds: number[];
  customFieldsData: Record<string, CustomFieldValue>;
  teamCustomFieldsData: Record<number, Record<string, CustomFieldValue>>;
  updatedAt: number;
  /** Derived: team members as at the session's start plus extra students; recomputed on writes. */
  rosterIds: number[];
}

export interface SAttendanceRecord {
  id: number;
  sessionId: number;
  studentId: number;
  teamId: number | null;
  absent: boolean;
  explained: boolean;
  comment: string | null;
  addedToRoll: boolean;
  flagIds: number[];
  rollId: number;
  markedByUserId: number | null;
  timeMarked: number | null;
  editedByUserId: number | null;
  timeEdited: number | null;
  updatedByUserId: number | null;
  updatedAt: number;
}

export interface SIncidentTemplateField {
  label: string;
  fieldType: 'text' | 'date' | 'time' | 'photo' | 'dropdown' | 'concussion-check' | 'body-chart';
  required: boolean;
  limit?: number;
  showLimit?: boolean;
  options?: string[];
  externalField: string | null;
}

export interface SIncident {
  id: number;
  location: string;
  studentId: number;
  fields: Record<string, { value: string; fieldType: string }> | null;
  dateTime: number;
  concussionStatus: 'none' | 'potential' | 'confirmed';
  returnToPlay: { date: number; reason: string | null } | null;
  activityId: number;
  sessionId: number | null;
  staffUserId: number;
  archived: boolean;
  updatedAt: number;
}

export interface SSeason {
  id: number;
  name: string;
  hidden: boolean;
  open: number | null;
  close: number | null;
  options: { id: string; label: string }[];
}

export interface SActivitySelection {
  id: number;
  selectedTimestamp: number;
  selectedByGuardianId: number | null;
  onWaitlist: boolean;
  activityId: number;
  seasonId: number;
  seasonActivityOptionId: string | null;
  studentId: number;
  invoice: { id: string; reference: string; status: 'unpaid' | 'paid' | 'partially-paid' | 'processing' };
  deleted: boolean;
}

export interface SAbsence {
  id: number;
  studentId: number;
  start: number;
  end: number;
  explained: boolean;
  reason: string;
  updatedAt: number;
}

export interface School {
  seed: number;
  scale: Scale;
  /** The instant the school was generated around (ISO). */
  now: string;
  timeZone: string;
  organisation: Organisation;
  organisations: Organisation[];
  departments: SDepartment[];
  yearGroups: SYearGroup[];
  activities: SActivity[];
  categories: SCategory[];
  locations: SLocation[];
  users: SUser[];
  students: SStudent[];
  teams: STeam[];
  memberships: SMembership[];
  customFields: SCustomField[];
  /** Sorted by start, then id. */
  sessions: SSession[];
  attendanceFlags: { id: number; name: string }[];
  attendanceRecords: SAttendanceRecord[];
  incidentTemplate: { id: number; field: SIncidentTemplateField[] };
  incidents: SIncident[];
  seasons: SSeason[];
  activitySelections: SActivitySelection[];
  absences: SAbsence[];
}
