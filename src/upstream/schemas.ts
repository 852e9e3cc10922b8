// zod schemas for every upstream resource, written to accept what real responses have been seen to carry rather
// than only what the spec's tables promise: `paginationData` for `pagination`, numbers as strings and strings as
// numbers, `frozen` as "yes"/"no" or a boolean, result codes, absent optional objects, extra unknown fields
// (stripped). They validate and coerce primitives only; `normalise.ts` shapes the clean domain records.
//
// Each record is parsed on its own (see paging.ts), so one bad record costs only itself. Validation is kept to the
// fields rostercal reads: every field checked is a field that can make a record fail. Required: ids, the instants
// that place a record in time, the links to other records, and the names the spec documents as non-null strings of
// named resources (teams, activities, locations, departments, year groups) and people (students, staff, whose
// email too). Everything documented as nullable, optional or "if any" may be absent.
import { z } from 'zod';
import { withCanonical } from './canonical.ts';
import { isCanonicalInstant, toInstant } from './instant.ts';

// ---- primitives ---------------------------------------------------------------------------------------------

/** Ids are documented as numbers and sometimes arrive as strings. */
export const zId = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^\s*-?\d+\s*$/)
    .transform(Number),
]);

/** Text documented as a string that sometimes arrives as a number (scores, SIS ids, jersey numbers, string ids). */
export const zText = z.union([z.string(), z.number().transform(String)]);

/**
 * Scores: `organisationScore` arrives as a string, `opponentScore` as a number. Kept as received (no transform, so
 * both forms are already output form) and printed as text by the normaliser.
 */
export const zScore = withCanonical(
  z.union([z.string(), z.number()]),
  (v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)),
);

/** A number that sometimes arrives as a string (`numRecords`, coordinates). */
export const zNum = z.union([
  z.number(),
  z
    .string()
    .regex(/^\s*-?\d+(\.\d+)?\s*$/)
    .transform(Number),
]);

const TRUE_WORDS = new Set(['yes', 'y', 'true', '1']);
const FALSE_WORDS = new Set(['no', 'n', 'false', '0']);

/** Booleans, and the `"yes"`/`"no"` that `frozen` is documented as. */
export const zBool = z.union([
  z.boolean(),
  z.string().transform((s, ctx) => {
    const word = s.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return true;
    if (FALSE_WORDS.has(word)) return false;
    ctx.addIssue({ code: 'custom', message: 'expected a boolean or yes/no' });
    return z.NEVER;
  }),
  z.literal([0, 1]).transform((n) => n === 1),
]);

/** Any upstream timestamp, normalised to `YYYY-MM-DDTHH:mm:ss.sssZ` (UTC; zone-less values are UTC). */
export const zInstant = withCanonical(
  z.union([z.string(), z.number()]).transform((v, ctx) => {
    const instant = toInstant(v);
    if (instant === null) {
      ctx.addIssue({ code: 'custom', message: 'expected an ISO 8601 date-time' });
      return z.NEVER;
    }
    return instant;
  }),
  isCanonicalInstant,
);

/** Upstream result codes and the spellings seen for them, to the canonical code. */
const RESULT_ALIASES: Readonly<Record<string, ResultCode>> = {
  W: 'W',
  WIN: 'W',
  WON: 'W',
  L: 'L',
  LOSS: 'L',
  LOST: 'L',
  D: 'D',
  DRAW: 'D',
  DRAWN: 'D',
  T: 'D',
  TIE: 'D',
  F: 'F',
  FORFEIT: 'F',
  OF: 'OF',
  NR: 'NR',
  'NO-RESULT': 'NR',
  'NO RESULT': 'NR',
};

export type ResultCode = 'W' | 'L' | 'D' | 'F' | 'OF' | 'NR';
const RESULT_CODES: ReadonlySet<unknown> = new Set<ResultCode>(['W', 'L', 'D', 'F', 'OF', 'NR']);

/** Fixture result: `W`, `L`, `D`, `F` (we forfeited), `OF` (opponent forfeited), `NR`; empty means none. */
export const zResult = withCanonical(
  z.string().transform((s, ctx): ResultCode | null => {
    const code = s.trim().toUpperCase();
    if (code === '') return null;
    const result = RESULT_ALIASES[code];
    if (result === undefined) {
      ctx.addIssue({ code: 'custom', message: 'unknown result code' });
      return z.NEVER;
    }
    return result;
  }),
  (v) => RESULT_CODES.has(v),
);

const STATUSES: ReadonlySet<unknown> = new Set(['confirmed', 'unconfirmed', 'draft']);

const zStatus = withCanonical(
  z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .pipe(z.enum(['confirmed', 'unconfirmed', 'draft'])),
  (v) => STATUSES.has(v),
);

const zRef = z.object({ id: zId, name: zText.nullish() });
const zIdOnly = z.object({ id: zId });
const zCustomFieldsData = z.record(z.string(), z.unknown());

// ---- envelopes ------------------------------------------------------------------------------------------------

const zPagination = z.object({
  currentPage: zNum.nullish(),
  lastPage: zNum,
  pageLength: zNum.nullish(),
  numRecords: zNum.nullish(),
});

export const zListEnvelope = z.object({
  data: z.array(z.unknown()),
  pagination: zPagination.nullish(),
  /** The older name, still seen. */
  paginationData: zPagination.nullish(),
  customFieldsMetadata: z.record(z.string(), z.unknown()).nullish(),
});

export const zSingleEnvelope = z.object({
  data: z.record(z.string(), z.unknown()),
  customFieldsMetadata: z.record(z.string(), z.unknown()).nullish(),
});

export const zCustomFieldMeta = z.object({
  label: zText.nullish(),
  dataType: z.enum(['short-text', 'time', 'single-select', 'staff', 'student']),
  showToUserTypes: z.array(z.string()).nullish(),
  showAfterField: zText.nullish(),
});

// ---- resources ------------------------------------------------------------------------------------------------

const zPerson = {
  id: zId,
  firstName: zText.nullish(),
  lastName: zText.nullish(),
};

export const zSession = z.object({
  id: zId,
  title: zText.nullish(),
  notes: z.string().nullish(),
  studentParentNotes: z.string().nullish(),
  opponent: zText.nullish(),
  bye: zBool.nullish(),
  cancelled: zBool.nullish(),
  scored: zBool.nullish(),
  hexColor: z.string().nullish(),
  startDateTime: zInstant,
  endDateTime: zInstant,
  creatorUserId: zId.nullish(),
  seriesId: zId.nullish(),
  organisationScore: zScore.nullish(),
  opponentScore: zScore.nullish(),
  result: zResult.nullish(),
  remindStaff: zBool.nullish(),
  status: zStatus.nullish(),
  optional: zBool.nullish(),
  roundName: zText.nullish(),
  activity: z.object({
    id: zId,
    name: zText.nullish(),
    department: zRef.nullish(),
    hexColor: z.string().nullish(),
  }),
  assignedStaff: z
    .array(z.object({ ...zPerson, sisId: zText.nullish(), externalId: zText.nullish() }))
    .nullish(),
  locationData: z
    .object({
      id: zId.nullish(),
      name: zText.nullish(),
      address: zText.nullish(),
      latitude: zNum.nullish(),
      longitude: zNum.nullish(),
      owner: z
        .object({ id: zId, name: zText.nullish(), acronym: zText.nullish(), shortName: zText.nullish() })
        .nullish(),
    })
    .nullish(),
  teams: z
    .array(
      z.object({
        id: zId,
        name: zText.nullish(),
        category: z.object({ id: zId, name: zText.nullish(), sortOrder: zNum.nullish() }).nullish(),
        subcategory: zRef.nullish(),
        customFieldsData: zCustomFieldsData.nullish(),
      }),
    )
    .nullish(),
  students: z.array(z.object({ ...zPerson, smsId: zText.nullish(), yearGroup: zRef.nullish() })).nullish(),
  customFieldsData: zCustomFieldsData.nullish(),
});

export const zTeam = z.object({
  id: zId,
  name: zText,
  sisId: zText.nullish(),
  hidden: zBool.nullish(),
  playersRanked: zBool.nullish(),
  category: z.object({ id: zId, name: zText.nullish(), sortOrder: zNum.nullish() }).nullish(),
  subcategory: zRef.nullish(),
  activity: z.object({
    id: zId,
    name: zText.nullish(),
    sisCode: zText.nullish(),
    department: zRef.nullish(),
  }),
  assignedStaff: z.array(z.object({ ...zPerson, sisId: zText.nullish() })).nullish(),
  students: z
    .array(
      // A member needs `studentId` (or the single-team example's `id`): normalise.ts enforces it, since a
      // refinement here would keep the fast path (canonical.ts) from applying.
      z.object({
        studentId: zId.nullish(),
        id: zId.nullish(),
        firstName: zText.nullish(),
        legalFirstName: zText.nullish(),
        lastName: zText.nullish(),
        smsId: zText.nullish(),
        yearGroup: zRef.nullish(),
        boarder: zBool.nullish(),
        captain: zBool.nullish(),
        jerseyNumber: zText.nullish(),
        positionId: zId.nullish(),
        sortOrder: zNum.nullish(),
        medicalConditions: z.array(z.unknown()).nullish(),
        guardians: z.array(z.unknown()).nullish(),
      }),
    )
    .nullish(),
  positions: z.array(z.object({ id: zId, name: zText.nullish(), numberOfSlots: zNum.nullish() })).nullish(),
  studentSortType: zText.nullish(),
});

export const zStudent = z.object({
  id: zId,
  legalFirstName: zText.nullish(),
  firstName: zText,
  lastName: zText,
  sisId: zText.nullish(),
  secondarySisId: zText.nullish(),
  yearGroupId: zId.nullish(),
});

export const zStudentTeam = z.object({
  id: zId,
  student: zIdOnly,
  team: zIdOnly,
  startDateTime: zInstant.nullish(),
  endDateTime: zInstant.nullish(),
});

export const zAttendanceRecord = z.object({
  id: zId,
  absent: zBool,
  explained: zBool.nullish(),
  comment: zText.nullish(),
  addedToRoll: zBool.nullish(),
  student: zIdOnly,
  session: zIdOnly,
  team: zIdOnly.nullish(),
  updatedTimestamp: zInstant.nullish(),
});

export const zUser = z.object({
  id: zId,
  firstName: zText,
  lastName: zText,
  email: zText,
  mobileNumber: zText.nullish(),
  isAdmin: zBool.nullish(),
  isManager: zBool.nullish(),
  frozen: zBool.nullish(),
  sisId: zText.nullish(),
  externalId: zText.nullish(),
  secondaryExternalId: zText.nullish(),
  activitiesPermissions: z.array(z.object({ activityId: zId })).nullish(),
  departments: z.array(zIdOnly).nullish(),
});

export const zIncident = z.object({
  id: zId,
  location: zText.nullish(),
  studentConcerned: zIdOnly,
  dateTime: zInstant,
  concussionStatus: z.enum(['none', 'potential', 'confirmed']).nullish(),
  activity: zIdOnly,
  shift: z.object({ id: zId.nullish() }).nullish(),
  archived: zBool.nullish(),
});

export const zLocation = z.object({
  id: zId,
  name: zText,
  address: zText.nullish(),
  latitude: zNum.nullish(),
  longitude: zNum.nullish(),
  archived: zBool.nullish(),
});

export const zDepartment = z.object({ id: zId, name: zText });

export const zYearGroup = z.object({ id: zId, name: zText, archived: zBool.nullish() });

export const zActivity = z.object({
  id: zId,
  name: zText,
  code: zText.nullish(),
  emoji: z.string().nullish(),
  archived: zBool.nullish(),
  hexColor: z.string().nullish(),
  smsCode: zText.nullish(),
  activityType: zText.nullish(),
  rollMode: z.enum(['present', 'absent']).nullish(),
  department: zRef.nullish(),
});

export const zActivitySelection = z.object({
  id: zId,
  selectedTimestamp: zInstant,
  selectedByGuardianId: zId.nullish(),
  onWaitlist: zBool.nullish(),
  activity: zIdOnly,
  season: zIdOnly,
  student: zIdOnly,
  invoice: z.object({ status: zText.nullish() }).nullish(),
});

export const zAbsence = z.object({
  id: zId,
  studentId: zId,
  startDate: zInstant,
  endDate: zInstant,
  explained: zBool.nullish(),
  reason: zText.nullish(),
});

export const zUserWriteResult = z.object({
  ...zPerson,
  sisId: zText.nullish(),
  externalId: zText.nullish(),
  secondaryExternalId: zText.nullish(),
  email: zText.nullish(),
  userType: zText.nullish(),
  activated: zBool.nullish(),
});

export const zCreatedSessions = z.object({
  createdSessions: z.array(z.object({ id: zId, locationId: zId.nullish() })),
});

export const zUsersResponse = z.object({ users: z.array(z.unknown()) });
export const zDataArrayResponse = z.object({ data: z.array(z.unknown()) });

export type RawSession = z.output<typeof zSession>;
export type RawTeam = z.output<typeof zTeam>;
export type RawStudent = z.output<typeof zStudent>;
export type RawStudentTeam = z.output<typeof zStudentTeam>;
export type RawAttendanceRecord = z.output<typeof zAttendanceRecord>;
export type RawUser = z.output<typeof zUser>;
export type RawIncident = z.output<typeof zIncident>;
export type RawLocation = z.output<typeof zLocation>;
export type RawDepartment = z.output<typeof zDepartment>;
export type RawYearGroup = z.output<typeof zYearGroup>;
export type RawActivity = z.output<typeof zActivity>;
export type RawActivitySelection = z.output<typeof zActivitySelection>;
export type RawAbsence = z.output<typeof zAbsence>;
export type RawUserWriteResult = z.output<typeof zUserWriteResult>;
