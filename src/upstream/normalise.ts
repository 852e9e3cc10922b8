// Parsed upstream records → the clean domain types of src/domain/types.ts. Absent optional facts become null
// (never undefined), absent lists become empty, and custom field values take one shape per data type.
// Every object is built with its keys in sorted order: the store's stable JSON of a record is then the engine's
// own JSON.stringify, ~5× faster than sorting keys while writing (util/stable-json.ts; its text is the same either
// way, so an object out of order only costs time). test/upstream/sorted-records.test.ts holds every kind to it.
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
      dataType: m.dataType,
      key,
      label: m.label ?? key,
      showAfterField: textOrNull(m.showAfterField),
      // Unknown audiences are dropped: a field is then shown to fewer people, never to more.
      showToUserTypes: (m.showToUserTypes ?? []).filter((t): t is UserType => USER_TYPES.has(t)),
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
  // In sorted order, as every stored object is (see the top of this file).
  for (const key of Object.keys(raw).sort()) {
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
    activity: {
      department: ref(r.activity.department),
      hexColor: textOrNull(r.activity.hexColor),
      id: r.activity.id,
      name: r.activity.name ?? '',
    },
    bye: r.bye ?? false,
    cancelled: r.cancelled ?? false,
    creatorUserId: r.creatorUserId ?? null,
    customFieldsData: normaliseCustomFields(r.customFieldsData, index),
    end: r.endDateTime,
    hexColor: textOrNull(r.hexColor),
    id: r.id,
    location:
      loc == null || (loc.id == null && loc.name == null)
        ? null
        : {
            address: textOrNull(loc.address),
            id: loc.id ?? null,
            latitude: loc.latitude ?? null,
            longitude: loc.longitude ?? null,
            name: loc.name ?? '',
            owner:
              loc.owner == null
                ? null
                : {
                    acronym: textOrNull(loc.owner.acronym),
                    id: loc.owner.id,
                    name: loc.owner.name ?? '',
                    shortName: textOrNull(loc.owner.shortName),
                  },
          },
    notes: r.notes ?? '',
    opponent: textOrNull(r.opponent),
    opponentScore: scoreText(r.opponentScore),
    optional: r.optional ?? false,
    organisationScore: scoreText(r.organisationScore),
    remindStaff: r.remindStaff ?? false,
    result: r.result == null ? null : RESULTS[r.result],
    roundName: textOrNull(r.roundName),
    scored: r.scored ?? false,
    seriesId: r.seriesId ?? null,
    staff: (r.assignedStaff ?? []).map((s) => ({
      externalId: textOrNull(s.externalId),
      firstName: s.firstName ?? '',
      id: s.id,
      lastName: s.lastName ?? '',
      sisId: textOrNull(s.sisId),
    })),
    start: r.startDateTime,
    status: r.status ?? 'confirmed',
    studentParentNotes: r.studentParentNotes ?? '',
    students: (r.students ?? []).map((s) => ({ id: s.id })),
    teams: (r.teams ?? []).map((t) => ({
      category:
        t.category == null
          ? null
          : { id: t.category.id, name: t.category.name ?? '', sortOrder: t.category.sortOrder ?? null },
      customFieldsData: normaliseCustomFields(t.customFieldsData, index),
      id: t.id,
      name: t.name ?? '',
      subcategory: ref(t.subcategory),
    })),
    title: r.title ?? '',
  };
}

export function normaliseTeam(r: RawTeam): Team {
  return {
    activity: {
      department: ref(r.activity.department),
      id: r.activity.id,
      name: r.activity.name ?? '',
      sisCode: textOrNull(r.activity.sisCode),
    },
    category:
      r.category == null
        ? null
        : { id: r.category.id, name: r.category.name ?? '', sortOrder: r.category.sortOrder ?? null },
    hidden: r.hidden ?? false,
    id: r.id,
    name: r.name,
    playersRanked: r.playersRanked ?? false,
    positions: (r.positions ?? []).map((p) => ({
      id: p.id,
      name: p.name ?? '',
      numberOfSlots: p.numberOfSlots ?? null,
    })),
    sisId: textOrNull(r.sisId),
    staff: (r.assignedStaff ?? []).map((s) => ({
      firstName: s.firstName ?? '',
      id: s.id,
      lastName: s.lastName ?? '',
      sisId: textOrNull(s.sisId),
    })),
    studentSortType: textOrNull(r.studentSortType),
    students: (r.students ?? []).map(
      (s, i): TeamMember => ({
        boarder: s.boarder ?? false,
        captain: s.captain ?? false,
        firstName: s.firstName ?? '',
        guardians: (s.guardians ?? []).map(guardian).filter((g): g is Guardian => g !== null),
        jerseyNumber: textOrNull(s.jerseyNumber),
        lastName: s.lastName ?? '',
        legalFirstName: textOrNull(s.legalFirstName),
        medicalConditions: (s.medicalConditions ?? []).map(medicalCondition).filter((c) => c !== ''),
        positionId: s.positionId ?? null,
        smsId: textOrNull(s.smsId),
        sortOrder: s.sortOrder ?? null,
        studentId: memberId(s.studentId ?? s.id, i),
        yearGroup: ref(s.yearGroup),
      }),
    ),
    subcategory: ref(r.subcategory),
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
    return g.trim() === '' ? null : { email: null, name: g.trim(), phone: null, relationship: null };
  if (g === null || typeof g !== 'object') return null;
  const o = g as Record<string, unknown>;
  const name =
    str(o.name) ?? str(o.fullName) ?? ([str(o.firstName), str(o.lastName)].filter(Boolean).join(' ') || null);
  if (name === null) return null;
  return {
    email: str(o.email),
    name,
    phone: str(o.phone) ?? str(o.mobileNumber) ?? str(o.mobile) ?? str(o.phoneNumber),
    relationship: str(o.relationship) ?? str(o.relation) ?? str(o.type),
  };
}

export function normaliseStudent(r: RawStudent, current: boolean): Student {
  return {
    current,
    firstName: r.firstName,
    id: r.id,
    lastName: r.lastName,
    legalFirstName: textOrNull(r.legalFirstName),
    secondarySisId: textOrNull(r.secondarySisId),
    sisId: textOrNull(r.sisId),
    yearGroupId: r.yearGroupId ?? null,
  };
}

export function normaliseStudentTeam(r: RawStudentTeam): StudentTeam {
  return {
    end: r.endDateTime ?? null,
    id: r.id,
    start: r.startDateTime ?? null,
    studentId: r.student.id,
    teamId: r.team.id,
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
    activityIds: (r.activitiesPermissions ?? []).map((a) => a.activityId),
    departmentIds: (r.departments ?? []).map((d) => d.id),
    email: r.email,
    externalId: textOrNull(r.externalId),
    firstName: r.firstName,
    frozen: r.frozen ?? false,
    id: r.id,
    isAdmin: r.isAdmin ?? false,
    isManager: r.isManager ?? false,
    lastName: r.lastName,
    mobileNumber: textOrNull(r.mobileNumber),
    secondaryExternalId: textOrNull(r.secondaryExternalId),
    sisId: textOrNull(r.sisId),
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
    address: textOrNull(r.address),
    archived: r.archived ?? false,
    id: r.id,
    latitude: r.latitude ?? null,
    longitude: r.longitude ?? null,
    name: r.name,
  };
}

export function normaliseDepartment(r: RawDepartment): Department {
  return { id: r.id, name: r.name };
}

export function normaliseYearGroup(r: RawYearGroup): YearGroup {
  return { archived: r.archived ?? false, id: r.id, name: r.name };
}

export function normaliseActivity(r: RawActivity): Activity {
  return {
    activityType: textOrNull(r.activityType),
    archived: r.archived ?? false,
    code: textOrNull(r.code),
    department: ref(r.department),
    emoji: textOrNull(r.emoji),
    hexColor: textOrNull(r.hexColor),
    id: r.id,
    name: r.name,
    rollMode: r.rollMode ?? null,
    smsCode: textOrNull(r.smsCode),
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
    end: r.endDate,
    explained: r.explained ?? false,
    id: r.id,
    reason: r.reason ?? '',
    start: r.startDate,
    studentId: r.studentId,
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
