// Parsed upstream records → the clean domain types of src/domain/types.ts. Absent optional facts become null
// (never undefined), absent lists become empty, and custom field values take one shape per data type.
import type {
  Activity,
  CustomFieldMeta,
  CustomFieldsData,
  CustomFieldValue,
  Department,
  FixtureResult,
  Guardian,
  Id,
  Location,
  PreExplainedAbsence,
  Ref,
  Session,
  StaffUser,
  Student,
  StudentTeam,
  Team,
  TeamMember,
  UserType,
  YearGroup,
} from '../domain/types.ts';
import type { ActivitySelection, AttendanceRecord, Incident, UserWriteResult } from './api.ts';
import type {
  RawAbsence,
  RawActivity,
  RawActivitySelection,
  RawAttendanceRecord,
  RawDepartment,
  RawIncident,
  RawLocation,
  RawSession,
  RawStudent,
  RawStudentTeam,
  RawTeam,
  RawUser,
  RawUserWriteResult,
  RawYearGroup,
  ResultCode,
} from './schemas.ts';
import { zCustomFieldMeta } from './schemas.ts';

/** A record the normaliser cannot make sense of; reported as malformed with this reason. */
export class RecordError extends Error {}

type Nullish<T> = T | null | undefined;

const ref = (r: Nullish<{ id: Id; name?: Nullish<string> }>): Ref | null =>
  r == null ? null : { id: r.id, name: r.name ?? '' };

const textOrNull = (s: Nullish<string>): string | null => (s == null || s === '' ? null : s);

const scoreText = (s: Nullish<string | number>): string | null => (s == null || s === '' ? null : String(s));

// ---- custom fields ------------------------------------------------------------------------------------------

export type CustomFieldIndex = ReadonlyMap<string, CustomFieldMeta>;

const USER_TYPES: ReadonlySet<string> = new Set<UserType>([
  'admin',
  'manager',
  'staff',
  'guardian',
  'student',
]);

/**
 * `customFieldsMetadata` (an object keyed by field key) → the fields in display order (`showAfterField` names the
 * field before). Entries that cannot be read are returned separately so the caller can report them.
 */
export function normaliseCustomFieldsMetadata(raw: Record<string, unknown>): {
  fields: CustomFieldMeta[];
  bad: { key: string; reason: string }[];
} {
  const byKey = new Map<string, CustomFieldMeta>();
  const bad: { key: string; reason: string }[] = [];
  for (const [key, value] of Object.entries(raw)) {
    const parsed = zCustomFieldMeta.safeParse(value);
    if (!parsed.success) {
      bad.push({ key, reason: issueReason(parsed.error.issues) });
      continue;
    }
    const m = parsed.data;
    byKey.set(key, {
      key,
      label: m.label ?? key,
      dataType: m.dataType,
      // Unknown audiences are dropped: a field is then shown to fewer people, never to more.
      showToUserTypes: (m.showToUserTypes ?? []).filter((t): t is UserType => USER_TYPES.has(t)),
      showAfterField: textOrNull(m.showAfterField),
    });
  }
  return { fields: orderFields(byKey), bad };
}

/** Follow the `showAfterField` chains: roots (null or unknown predecessor) first, in the order received. */
function orderFields(byKey: Map<string, CustomFieldMeta>): CustomFieldMeta[] {
  const after = new Map<string, CustomFieldMeta[]>();
  const roots: CustomFieldMeta[] = [];
  for (const f of byKey.values()) {
    if (f.showAfterField !== null && byKey.has(f.showAfterField) && f.showAfterField !== f.key) {
      const list = after.get(f.showAfterField) ?? [];
      list.push(f);
      after.set(f.showAfterField, list);
    } else roots.push(f);
  }
  const out: CustomFieldMeta[] = [];
  const seen = new Set<string>();
  const visit = (f: CustomFieldMeta): void => {
    if (seen.has(f.key)) return;
    seen.add(f.key);
    out.push(f);
    for (const next of after.get(f.key) ?? []) visit(next);
  };
  for (const r of roots) visit(r);
  // A cycle has no root: keep its fields rather than lose them.
  for (const f of byKey.values()) visit(f);
  return out;
}

export function indexCustomFields(fields: readonly CustomFieldMeta[] | undefined): CustomFieldIndex | null {
  return fields ? new Map(fields.map((f) => [f.key, f])) : null;
}

/**
 * Values of `staff`/`student` fields become id lists; all others strings. Without metadata an array is taken for
 * an id list and anything else for text. Null values are left out.
 */
export function normaliseCustomFields(
  raw: Nullish<Record<string, unknown>>,
  index: CustomFieldIndex | null,
): CustomFieldsData {
  const out: CustomFieldsData = {};
  if (raw == null) return out;
  for (const key in raw) {
    const value = raw[key];
    if (value === null || value === undefined) continue;
    const type = index?.get(key)?.dataType;
    const idList = type === 'staff' || type === 'student' || (type === undefined && Array.isArray(value));
    out[key] = idList ? toIdList(value, key) : toFieldText(value, key);
  }
  return out;
}

function toIdList(value: unknown, key: string): Id[] {
  let items: unknown[];
  if (Array.isArray(value)) items = value;
  else if (typeof value === 'number') items = [value];
  else if (typeof value === 'string') {
    const s = value.trim();
    if (s === '') return [];
    if (s.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(s);
        if (!Array.isArray(parsed)) throw new RecordError(`customFieldsData.${key}: not an id list`);
        items = parsed;
      } catch (err) {
        if (err instanceof RecordError) throw err;
        throw new RecordError(`customFieldsData.${key}: not an id list`);
      }
    } else items = s.split(',');
  } else throw new RecordError(`customFieldsData.${key}: not an id list`);
  return items.map((item) => {
    const raw = item !== null && typeof item === 'object' ? (item as { id?: unknown }).id : item;
    const n =
      typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n)) throw new RecordError(`customFieldsData.${key}: not an id list`);
    return n;
  });
}

function toFieldText(value: unknown, key: string): CustomFieldValue {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // A text field that arrived as a list (e.g. a multi-valued select): its items, comma-separated.
  if (Array.isArray(value) && value.every((v) => typeof v === 'string' || typeof v === 'number')) {
    return value.join(', ');
  }
  throw new RecordError(`customFieldsData.${key}: not text`);
}

const RESULTS: Readonly<Record<ResultCode, FixtureResult>> = {
  W: 'win',
  L: 'loss',
  D: 'draw',
  F: 'forfeit',
  OF: 'opponent-forfeit',
  NR: 'no-result',
};

// ---- resources ------------------------------------------------------------------------------------------------

export function normaliseSession(r: RawSession, index: CustomFieldIndex | null): Session {
  const loc = r.locationData;
  return {
    id: r.id,
    title: r.title ?? '',
    notes: r.notes ?? '',
    studentParentNotes: r.studentParentNotes ?? '',
    opponent: textOrNull(r.opponent),
    bye: r.bye ?? false,
    cancelled: r.cancelled ?? false,
    scored: r.scored ?? false,
    hexColor: textOrNull(r.hexColor),
    start: r.startDateTime,
    end: r.endDateTime,
    creatorUserId: r.creatorUserId ?? null,
    seriesId: r.seriesId ?? null,
    organisationScore: scoreText(r.organisationScore),
    opponentScore: scoreText(r.opponentScore),
    result: r.result == null ? null : RESULTS[r.result],
    remindStaff: r.remindStaff ?? false,
    status: r.status ?? 'confirmed',
    optional: r.optional ?? false,
    roundName: textOrNull(r.roundName),
    activity: {
      id: r.activity.id,
      name: r.activity.name ?? '',
      department: ref(r.activity.department),
      hexColor: textOrNull(r.activity.hexColor),
    },
    location:
      loc == null || (loc.id == null && loc.name == null)
        ? null
        : {
            id: loc.id ?? null,
            name: loc.name ?? '',
            address: textOrNull(loc.address),
            latitude: loc.latitude ?? null,
            longitude: loc.longitude ?? null,
            owner:
              loc.owner == null
                ? null
                : {
                    id: loc.owner.id,
                    name: loc.owner.name ?? '',
                    acronym: textOrNull(loc.owner.acronym),
                    shortName: textOrNull(loc.owner.shortName),
                  },
          },
    teams: (r.teams ?? []).map((t) => ({
      id: t.id,
      name: t.name ?? '',
      category:
        t.category == null
          ? null
          : { id: t.category.id, name: t.category.name ?? '', sortOrder: t.category.sortOrder ?? null },
      subcategory: ref(t.subcategory),
      customFieldsData: normaliseCustomFields(t.customFieldsData, index),
    })),
    students: (r.students ?? []).map((s) => ({
      id: s.id,
      firstName: s.firstName ?? '',
      lastName: s.lastName ?? '',
      smsId: textOrNull(s.smsId),
      yearGroup: ref(s.yearGroup),
    })),
    staff: (r.assignedStaff ?? []).map((s) => ({
      ...named(s),
      sisId: textOrNull(s.sisId),
      externalId: textOrNull(s.externalId),
    })),
    customFieldsData: normaliseCustomFields(r.customFieldsData, index),
  };
}

/** A listed person's id and names (a missing name is empty, never undefined). */
function named<I>(s: { id: I; firstName?: string | null; lastName?: string | null }) {
  return { id: s.id, firstName: s.firstName ?? '', lastName: s.lastName ?? '' };
}

export function normaliseTeam(r: RawTeam): Team {
  return {
    id: r.id,
    name: r.name,
    sisId: textOrNull(r.sisId),
    hidden: r.hidden ?? false,
    playersRanked: r.playersRanked ?? false,
    category:
      r.category == null
        ? null
        : { id: r.category.id, name: r.category.name ?? '', sortOrder: r.category.sortOrder ?? null },
    subcategory: ref(r.subcategory),
    activity: {
      id: r.activity.id,
      name: r.activity.name ?? '',
      sisCode: textOrNull(r.activity.sisCode),
      department: ref(r.activity.department),
    },
    staff: (r.assignedStaff ?? []).map((s) => ({ ...named(s), sisId: textOrNull(s.sisId) })),
    students: (r.students ?? []).map(
      (s, i): TeamMember => ({
        studentId: memberId(s.studentId ?? s.id, i),
        firstName: s.firstName ?? '',
        legalFirstName: textOrNull(s.legalFirstName),
        lastName: s.lastName ?? '',
        smsId: textOrNull(s.smsId),
        yearGroup: ref(s.yearGroup),
        boarder: s.boarder ?? false,
        captain: s.captain ?? false,
        jerseyNumber: textOrNull(s.jerseyNumber),
        positionId: s.positionId ?? null,
        sortOrder: s.sortOrder ?? null,
        medicalConditions: (s.medicalConditions ?? []).map(medicalCondition).filter((c) => c !== ''),
        guardians: (s.guardians ?? []).map(guardian).filter((g): g is Guardian => g !== null),
      }),
    ),
    positions: (r.positions ?? []).map((p) => ({
      id: p.id,
      name: p.name ?? '',
      numberOfSlots: p.numberOfSlots ?? null,
    })),
    studentSortType: textOrNull(r.studentSortType),
  };
}

function memberId(id: Id | null | undefined, index: number): Id {
  if (id == null) throw new RecordError(`students.${index}: team member without studentId`);
  return id;
}

const str = (v: unknown): string | null =>
  typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : null;

/** The spec shows medical conditions only as an array: take strings as they are, objects by their name. */
function medicalCondition(c: unknown): string {
  if (typeof c === 'string') return c.trim();
  if (c === null || typeof c !== 'object') return '';
  const o = c as Record<string, unknown>;
  const name = str(o.name) ?? str(o.condition) ?? str(o.title) ?? str(o.label);
  const detail = str(o.notes) ?? str(o.description) ?? str(o.details);
  if (name && detail) return `${name}: ${detail}`;
  return name ?? detail ?? '';
}

function guardian(g: unknown): Guardian | null {
  if (typeof g === 'string')
    return g.trim() === '' ? null : { name: g.trim(), relationship: null, email: null, phone: null };
  if (g === null || typeof g !== 'object') return null;
  const o = g as Record<string, unknown>;
  const name =
    str(o.name) ?? str(o.fullName) ?? ([str(o.firstName), str(o.lastName)].filter(Boolean).join(' ') || null);
  if (name === null) return null;
  return {
    name,
    relationship: str(o.relationship) ?? str(o.relation) ?? str(o.type),
    email: str(o.email),
    phone: str(o.phone) ?? str(o.mobileNumber) ?? str(o.mobile) ?? str(o.phoneNumber),
  };
}

export function normaliseStudent(r: RawStudent, current: boolean): Student {
  return {
    id: r.id,
    firstName: r.firstName,
    legalFirstName: textOrNull(r.legalFirstName),
    lastName: r.lastName,
    sisId: textOrNull(r.sisId),
    secondarySisId: textOrNull(r.secondarySisId),
    yearGroupId: r.yearGroupId ?? null,
    current,
  };
}

export function normaliseStudentTeam(r: RawStudentTeam): StudentTeam {
  return {
    id: r.id,
    studentId: r.student.id,
    teamId: r.team.id,
    start: r.startDateTime ?? null,
    end: r.endDateTime ?? null,
  };
}

export function normaliseAttendanceRecord(r: RawAttendanceRecord): AttendanceRecord {
  return {
    id: r.id,
    absent: r.absent,
    explained: r.explained ?? false,
    comment: textOrNull(r.comment),
    addedToRoll: r.addedToRoll ?? false,
    studentId: r.student.id,
    sessionId: r.session.id,
    teamId: r.team?.id ?? null,
    updatedTimestamp: r.updatedTimestamp ?? null,
  };
}

export function normaliseUser(r: RawUser): StaffUser {
  return {
    id: r.id,
    firstName: r.firstName,
    lastName: r.lastName,
    email: r.email,
    mobileNumber: textOrNull(r.mobileNumber),
    isAdmin: r.isAdmin ?? false,
    isManager: r.isManager ?? false,
    frozen: r.frozen ?? false,
    sisId: textOrNull(r.sisId),
    externalId: textOrNull(r.externalId),
    secondaryExternalId: textOrNull(r.secondaryExternalId),
    activityIds: (r.activitiesPermissions ?? []).map((a) => a.activityId),
    departmentIds: (r.departments ?? []).map((d) => d.id),
  };
}

export function normaliseIncident(r: RawIncident): Incident {
  return {
    id: r.id,
    location: textOrNull(r.location),
    studentId: r.studentConcerned.id,
    dateTime: r.dateTime,
    concussionStatus: r.concussionStatus ?? 'none',
    activityId: r.activity.id,
    sessionId: r.shift?.id ?? null,
    archived: r.archived ?? false,
  };
}

export function normaliseLocation(r: RawLocation): Location {
  return {
    id: r.id,
    name: r.name,
    address: textOrNull(r.address),
    latitude: r.latitude ?? null,
    longitude: r.longitude ?? null,
    archived: r.archived ?? false,
  };
}

export function normaliseDepartment(r: RawDepartment): Department {
  return { id: r.id, name: r.name };
}

export function normaliseYearGroup(r: RawYearGroup): YearGroup {
  return { id: r.id, name: r.name, archived: r.archived ?? false };
}

export function normaliseActivity(r: RawActivity): Activity {
  return {
    id: r.id,
    name: r.name,
    code: textOrNull(r.code),
    emoji: textOrNull(r.emoji),
    archived: r.archived ?? false,
    hexColor: textOrNull(r.hexColor),
    smsCode: textOrNull(r.smsCode),
    activityType: textOrNull(r.activityType),
    rollMode: r.rollMode ?? null,
    department: ref(r.department),
  };
}

export function normaliseActivitySelection(r: RawActivitySelection): ActivitySelection {
  return {
    id: r.id,
    selectedTimestamp: r.selectedTimestamp,
    selectedByGuardianId: r.selectedByGuardianId ?? null,
    onWaitlist: r.onWaitlist ?? false,
    activityId: r.activity.id,
    seasonId: r.season.id,
    studentId: r.student.id,
    invoiceStatus: textOrNull(r.invoice?.status),
  };
}

export function normaliseAbsence(r: RawAbsence): PreExplainedAbsence {
  return {
    id: r.id,
    studentId: r.studentId,
    start: r.startDate,
    end: r.endDate,
    explained: r.explained ?? false,
    reason: r.reason ?? '',
  };
}

export function normaliseUserWriteResult(r: RawUserWriteResult): UserWriteResult {
  return {
    id: r.id,
    sisId: textOrNull(r.sisId),
    externalId: textOrNull(r.externalId),
    secondaryExternalId: textOrNull(r.secondaryExternalId),
    firstName: r.firstName ?? '',
    lastName: r.lastName ?? '',
    email: r.email ?? '',
    userType: r.userType ?? '',
    activated: r.activated ?? true,
  };
}

/** The first zod issue as `path: message`: short, and free of the offending value (it may be a child's data). */
export function issueReason(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const first = issues[0];
  if (!first) return 'invalid record';
  const path = first.path.map(String).join('.');
  const more = issues.length > 1 ? ` (+${issues.length - 1} more)` : '';
  return `${path === '' ? 'record' : path}: ${first.message}${more}`;
}
