// The write endpoints with the spec's rules. Each request is validated whole before anything changes,
// so a rejected batch leaves the school untouched. Every change stamps the record's updated time.
//
// Status choices where the spec leaves room: malformed bodies, missing or mistyped fields, and fields that
// "cannot be combined" (teamIds with studentIds, locationId with locationName, sisId with externalId) → 400;
// references to records that do not exist inside a body (activityId, teamIds, studentIds…) → 422;
// ids to update or delete that do not exist → 404; a new user whose e-mail is taken by an active user → 409.
import type { SAbsence, SSession, SUser } from './model.ts';
import { HttpError } from './query.ts';
import type { SandboxState } from './state.ts';
import { parseInstant } from './time.ts';
import * as wire from './wire.ts';

type Json = Record<string, unknown>;

const bad = (message: string) => new HttpError(400, message);
const unprocessable = (message: string) => new HttpError(422, message);
const notFound = (message: string) => new HttpError(404, message);

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function items(body: unknown, key: string): Json[] {
  if (!isObject(body)) throw bad('request body must be a JSON object');
  const list = body[key];
  if (!Array.isArray(list) || list.length === 0) throw bad(`${key} must be a non-empty array`);
  list.forEach((x, i) => {
    if (!isObject(x)) throw bad(`${key}[${i}] must be an object`);
  });
  return list as Json[];
}

function str(o: Json, key: string, where: string, required: boolean): string | undefined {
  const v = o[key];
  if (v === undefined || (v === null && !required)) {
    if (required) throw bad(`${where}.${key} is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw bad(`${where}.${key} must be a string`);
  return v;
}

function nullableStr(o: Json, key: string, where: string): string | null | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v !== 'string') throw bad(`${where}.${key} must be a string or null`);
  return v;
}

function bool(o: Json, key: string, where: string, required = false): boolean | undefined {
  const v = o[key];
  if (v === undefined) {
    if (required) throw bad(`${where}.${key} is required`);
    return undefined;
  }
  if (typeof v !== 'boolean') throw bad(`${where}.${key} must be a boolean`);
  return v;
}

function num(o: Json, key: string, where: string, required: boolean): number | undefined {
  const v = o[key];
  if (v === undefined) {
    if (required) throw bad(`${where}.${key} is required`);
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v)) throw bad(`${where}.${key} must be an integer`);
  return v;
}

function numArray(o: Json, key: string, where: string): number[] | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) {
    throw bad(`${where}.${key} must be an array of integers`);
  }
  return v as number[];
}

function instant(o: Json, key: string, where: string, required: boolean): number | undefined {
  const v = str(o, key, where, required);
  if (v === undefined) return undefined;
  const ms = parseInstant(v);
  if (ms === null)
    throw bad(
      `${where}.${key} must be a timestamp (ISO 8601 or YYYY-MM-DD HH:mm:ss), got ${JSON.stringify(v)}`,
    );
  return ms;
}

function actingUser(st: SandboxState, body: unknown): SUser {
  if (!isObject(body)) throw bad('request body must be a JSON object');
  const email = str(body, 'email', 'body', true)!;
  for (const k of ['sendStaffNotifications', 'sendStudentsAndGuardiansNotifications']) bool(body, k, 'body');
  if (body.reasonForChange !== undefined && typeof body.reasonForChange !== 'string') {
    throw bad('body.reasonForChange must be a string');
  }
  const user = st.school.users.find((u) => u.email.toLowerCase() === email.toLowerCase());
  if (!user || user.frozen)
    throw unprocessable(`email ${JSON.stringify(email)} is not an active user of the organisation`);
  return user;
}

function checkRefs(
  st: SandboxState,
  where: string,
  p: { teamIds?: number[]; studentIds?: number[]; staffIds?: number[] },
) {
  for (const id of p.teamIds ?? [])
    if (!st.teams.has(id)) throw unprocessable(`${where}.teamIds: no team ${id}`);
  for (const id of p.studentIds ?? [])
    if (!st.students.has(id)) throw unprocessable(`${where}.studentIds: no student ${id}`);
  for (const id of p.staffIds ?? [])
    if (!st.users.has(id)) throw unprocessable(`${where}.staffIds: no user ${id}`);
}

export function createSessions(st: SandboxState, body: unknown): Json {
  const user = actingUser(st, body);
  const list = items(body, 'sessions');
  const planned = list.map((o, i) => {
    const where = `sessions[${i}]`;
    const title = str(o, 'title', where, true)!;
    const activityId = num(o, 'activityId', where, true)!;
    const start = instant(o, 'startDateTime', where, true)!;
    const end = instant(o, 'endDateTime', where, true)!;
    const teamIds = numArray(o, 'teamIds', where) ?? [];
    const studentIds = numArray(o, 'studentIds', where) ?? [];
    const staffIds = numArray(o, 'staffIds', where) ?? [];
    if (teamIds.length > 0 && studentIds.length > 0)
      throw bad(`${where}: teamIds cannot be combined with studentIds`);
    const locationId = num(o, 'locationId', where, false);
    const locationName = str(o, 'locationName', where, false);
    if (locationId !== undefined && locationName !== undefined) {
      throw bad(`${where}: locationId cannot be combined with locationName`);
    }
    if (locationName !== undefined && locationName.trim() === '')
      throw bad(`${where}.locationName must not be empty`);
    const notes = str(o, 'notes', where, false) ?? '';
    const studentParentNotes = str(o, 'studentParentNotes', where, false) ?? '';
    const remindStaff = bool(o, 'remindStaff', where) ?? false;
    const optional = bool(o, 'optional', where) ?? false;
    if (!st.activities.has(activityId)) throw unprocessable(`${where}.activityId: no activity ${activityId}`);
    if (end <= start) throw unprocessable(`${where}: endDateTime must be after startDateTime`);
    if (locationId !== undefined && !st.locations.has(locationId)) {
      throw unprocessable(`${where}.locationId: no location ${locationId}`);
    }
    checkRefs(st, where, { teamIds, studentIds, staffIds });
    return {
      title,
      activityId,
      start,
      end,
      teamIds,
      studentIds,
      staffIds,
      locationId,
      locationName,
      notes,
      studentParentNotes,
      remindStaff,
      optional,
    };
  });
  const createdSessions: Json[] = [];
  for (const p of planned) {
    let locationId = p.locationId ?? null;
    let createdLocation: number | undefined;
    if (p.locationName !== undefined) {
      const name = p.locationName.trim();
      const existing = st.school.locations.find(
        (l) => !l.association && l.name.toLowerCase() === name.toLowerCase(),
      );
      if (existing) locationId = existing.id;
      else {
        const id = st.nextId('location');
        const loc = {
          id,
          name,
          address: null,
          latitude: null,
          longitude: null,
          archived: false,
          ownerId: st.school.organisation.id,
          subLocations: null,
          association: false,
        };
        st.school.locations.push(loc);
        st.locations.set(id, loc);
        locationId = id;
        createdLocation = id;
      }
    }
    const activity = st.activities.get(p.activityId)!;
    // In this order: ids and stamps are drawn from the state's counters.
    const id = st.nextId('session');
    const seriesId = st.nextId('series');
    const updatedAt = st.stamp();
    const s = unscoredSession({
      id,
      title: p.title,
      notes: p.notes,
      studentParentNotes: p.studentParentNotes,
      cancelled: false,
      hexColor: activity.hexColor,
      start: p.start,
      end: p.end,
      creatorUserId: user.id,
      seriesId,
      remindStaff: p.remindStaff,
      optional: p.optional,
      activityId: p.activityId,
      locationId,
      teamIds: p.teamIds,
      extraStudentIds: p.studentIds,
      staffIds: p.staffIds,
      customFieldsData: {},
      teamCustomFieldsData: {},
      updatedAt,
      rosterIds: st.rosterAt(p.teamIds, p.start, p.studentIds),
    });
    st.placeSession(s);
    createdSessions.push(
      createdLocation === undefined ? { id: s.id } : { id: s.id, locationId: createdLocation },
    );
  }
  st.version++;
  return { createdSessions };
}

/** What a new session is given; upstream sets the rest. */
export type NewSessionFields = Omit<
  SSession,
  | 'opponent'
  | 'opponentTeam'
  | 'opponentOrganisation'
  | 'bye'
  | 'scored'
  | 'organisationScore'
  | 'opponentScore'
  | 'result'
  | 'resultNotes'
  | 'roundName'
  | 'status'
>;

/**
 * A new session as upstream keeps it: confirmed, unscored, no opponent. The sandbox's generated school makes its
 * sessions with it too (school/sessions.ts); its fields keep this order, which the generated JSON shows.
 */
export function unscoredSession(f: NewSessionFields): SSession {
  return {
    id: f.id,
    title: f.title,
    notes: f.notes,
    studentParentNotes: f.studentParentNotes,
    opponent: null,
    opponentTeam: null,
    opponentOrganisation: null,
    bye: false,
    cancelled: f.cancelled,
    scored: false,
    hexColor: f.hexColor,
    start: f.start,
    end: f.end,
    creatorUserId: f.creatorUserId,
    seriesId: f.seriesId,
    organisationScore: null,
    opponentScore: null,
    result: null,
    resultNotes: null,
    roundName: null,
    remindStaff: f.remindStaff,
    status: 'confirmed',
    optional: f.optional,
    activityId: f.activityId,
    locationId: f.locationId,
    teamIds: f.teamIds,
    extraStudentIds: f.extraStudentIds,
    staffIds: f.staffIds,
    customFieldsData: f.customFieldsData,
    teamCustomFieldsData: f.teamCustomFieldsData,
    updatedAt: f.updatedAt,
    rosterIds: f.rosterIds,
  };
}

export function updateSessions(st: SandboxState, body: unknown): Json {
  actingUser(st, body);
  const list = items(body, 'sessions');
  const planned = list.map((o, i) => {
    const where = `sessions[${i}]`;
    const id = num(o, 'id', where, true)!;
    const s = st.sessions.get(id);
    if (!s) throw notFound(`${where}.id: no session ${id}`);
    const title = str(o, 'title', where, false);
    const activityId = num(o, 'activityId', where, false);
    const start = instant(o, 'startDateTime', where, false);
    const end = instant(o, 'endDateTime', where, false);
    const teamIds = numArray(o, 'teamIds', where);
    const studentIds = numArray(o, 'studentIds', where);
    const staffIds = numArray(o, 'staffIds', where);
    if ((teamIds?.length ?? 0) > 0 && (studentIds?.length ?? 0) > 0) {
      throw bad(`${where}: studentIds cannot be combined with non-empty teamIds`);
    }
    const notes = str(o, 'notes', where, false);
    const studentParentNotes = str(o, 'studentParentNotes', where, false);
    const remindStaff = bool(o, 'remindStaff', where);
    const optional = bool(o, 'optional', where);
    const cancelled = bool(o, 'cancelled', where);
    let location: number | null | undefined;
    if (o.location === null) location = null;
    else location = num(o, 'location', where, false);
    if (activityId !== undefined && !st.activities.has(activityId)) {
      throw unprocessable(`${where}.activityId: no activity ${activityId}`);
    }
    if (location !== undefined && location !== null && !st.locations.has(location)) {
      throw unprocessable(`${where}.location: no location ${location}`);
    }
    if ((end ?? s.end) <= (start ?? s.start))
      throw unprocessable(`${where}: endDateTime must be after startDateTime`);
    checkRefs(st, where, { teamIds, studentIds, staffIds });
    return {
      s,
      title,
      activityId,
      start,
      end,
      teamIds,
      studentIds,
      staffIds,
      notes,
      studentParentNotes,
      remindStaff,
      optional,
      cancelled,
      location,
    };
  });
  for (const p of planned) {
    const s = p.s;
    if (p.title !== undefined) s.title = p.title;
    if (p.activityId !== undefined) {
      s.activityId = p.activityId;
      s.hexColor = st.activities.get(p.activityId)!.hexColor;
    }
    if (p.start !== undefined) s.start = p.start;
    if (p.end !== undefined) s.end = p.end;
    if (p.teamIds !== undefined) s.teamIds = p.teamIds;
    if (p.studentIds !== undefined) s.extraStudentIds = p.studentIds;
    if (p.staffIds !== undefined) s.staffIds = p.staffIds;
    if (p.notes !== undefined) s.notes = p.notes;
    if (p.studentParentNotes !== undefined) s.studentParentNotes = p.studentParentNotes;
    if (p.remindStaff !== undefined) s.remindStaff = p.remindStaff;
    if (p.optional !== undefined) s.optional = p.optional;
    if (p.cancelled !== undefined) s.cancelled = p.cancelled;
    if (p.location !== undefined) s.locationId = p.location;
    s.rosterIds = st.rosterAt(s.teamIds, s.start, s.extraStudentIds);
    s.updatedAt = st.stamp();
    st.placeSession(s);
  }
  st.version++;
  return {};
}

export function deleteSessions(st: SandboxState, body: unknown): Json {
  actingUser(st, body);
  const ids = numArray(body as Json, 'sessionIds', 'body');
  if (!ids || ids.length === 0) throw bad('sessionIds must be a non-empty array of session ids');
  for (const id of ids) if (!st.sessions.has(id)) throw notFound(`sessionIds: no session ${id}`);
  for (const id of ids) st.removeSession(id);
  st.version++;
  return {};
}

const USER_TYPES = ['admin', 'manager', 'staff'] as const;

interface UserFields {
  sisId?: string | null;
  externalId?: string | null;
  secondaryExternalId?: string | null;
  firstName?: string;
  lastName?: string;
  email?: string;
  userType?: (typeof USER_TYPES)[number];
  departments?: number[];
  activities?: number[];
  payrollId?: string | null;
  mobileNumber?: string | null;
  activated?: boolean;
  payment?: 'ts' | 'na';
}

function userFields(st: SandboxState, o: Json, where: string, creating: boolean): UserFields {
  const f: UserFields = {
    sisId: nullableStr(o, 'sisId', where),
    externalId: nullableStr(o, 'externalId', where),
    secondaryExternalId: nullableStr(o, 'secondaryExternalId', where),
    firstName: str(o, 'firstName', where, creating),
    lastName: str(o, 'lastName', where, creating),
    email: str(o, 'email', where, creating),
    departments: numArray(o, 'departments', where),
    activities: numArray(o, 'activities', where),
    payrollId: nullableStr(o, 'payrollId', where),
    mobileNumber: nullableStr(o, 'mobileNumber', where),
    activated: bool(o, 'activated', where),
  };
  const userType = str(o, 'userType', where, creating);
  if (userType !== undefined) {
    if (!(USER_TYPES as readonly string[]).includes(userType))
      throw bad(`${where}.userType must be admin, manager or staff`);
    f.userType = userType as UserFields['userType'];
  }
  const payment = str(o, 'payment', where, false);
  if (payment !== undefined) {
    if (payment !== 'ts' && payment !== 'na') throw bad(`${where}.payment must be ts or na`);
    f.payment = payment;
  }
  if (f.sisId && (f.externalId || f.secondaryExternalId)) {
    throw bad(`${where}: sisId cannot be sent with externalId or secondaryExternalId`);
  }
  if (f.email !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(f.email)) {
    throw unprocessable(`${where}.email is not an e-mail address`);
  }
  for (const id of f.departments ?? [])
    if (!st.departments.has(id)) throw unprocessable(`${where}.departments: no department ${id}`);
  for (const id of f.activities ?? [])
    if (!st.activities.has(id)) throw unprocessable(`${where}.activities: no activity ${id}`);
  return f;
}

function applyUser(st: SandboxState, u: SUser, f: UserFields, sendInvite: boolean): void {
  if (f.firstName !== undefined) u.firstName = f.firstName;
  if (f.lastName !== undefined) u.lastName = f.lastName;
  if (f.email !== undefined) u.email = f.email.toLowerCase();
  if (f.userType !== undefined) {
    u.isAdmin = f.userType === 'admin';
    u.isManager = f.userType === 'manager';
  }
  if (f.departments !== undefined) u.departmentIds = [...f.departments];
  if (f.activities !== undefined) u.activityIds = [...f.activities];
  if (f.payrollId !== undefined) u.employeeId = f.payrollId;
  if (f.mobileNumber !== undefined) u.mobileNumber = f.mobileNumber;
  if (f.payment !== undefined) u.payment = f.payment;
  if (f.sisId !== undefined) {
    u.sisId = f.sisId;
    // A sisId sent alone is also written to secondaryExternalId.
    if (f.sisId !== null && f.externalId === undefined && f.secondaryExternalId === undefined)
      u.secondaryExternalId = f.sisId;
  }
  if (f.externalId !== undefined) u.externalId = f.externalId;
  if (f.secondaryExternalId !== undefined) u.secondaryExternalId = f.secondaryExternalId;
  if (f.activated !== undefined) u.frozen = !f.activated;
  if (sendInvite) u.inviteEmailLastSentTimestamp = st.now();
  u.updatedAt = st.stamp();
}

export function createUsers(st: SandboxState, body: unknown): Json {
  const list = items(body, 'users');
  const sendInvite = bool(body as Json, 'sendInviteEmail', 'body') ?? false;
  const seen = new Set<string>();
  const planned = list.map((o, i) => {
    const where = `users[${i}]`;
    const f = userFields(st, o, where, true);
    const email = f.email!.toLowerCase();
    if (seen.has(email)) throw new HttpError(409, `${where}.email ${email} appears twice in the request`);
    seen.add(email);
    const existing = st.school.users.find((u) => u.email.toLowerCase() === email);
    if (existing && !existing.frozen)
      throw new HttpError(409, `${where}.email ${email} already belongs to an active user`);
    return { f, existing };
  });
  const out: SUser[] = [];
  for (const { f, existing } of planned) {
    if (existing) {
      // Submitting a deactivated user again reactivates it rather than creating another.
      applyUser(st, existing, { ...f, activated: f.activated ?? true }, sendInvite);
      out.push(existing);
      continue;
    }
    const u: SUser = {
      id: st.nextId('user'),
      firstName: '',
      lastName: '',
      email: '',
      mobileNumber: null,
      isAdmin: false,
      isManager: false,
      employeeId: null,
      frozen: false,
      wwccNumber: null,
      wwccExpiryDate: null,
      updatedDetails: false,
      sisId: null,
      externalId: null,
      secondaryExternalId: null,
      payment: 'na',
      inviteEmailLastSentTimestamp: null,
      activityIds: [],
      departmentIds: [],
      integrationSynced: false,
      updatedAt: 0,
    };
    applyUser(st, u, { ...f, activated: f.activated ?? true }, sendInvite);
    st.school.users.push(u);
    st.users.set(u.id, u);
    out.push(u);
  }
  st.version++;
  return { users: out.map(wire.userWriteResult) };
}

export function updateUsers(st: SandboxState, body: unknown): Json {
  const list = items(body, 'users');
  const planned = list.map((o, i) => {
    const where = `users[${i}]`;
    const id = num(o, 'id', where, true)!;
    const u = st.users.get(id);
    if (!u) throw notFound(`${where}.id: no user ${id}`);
    const f = userFields(st, o, where, false);
    if (u.integrationSynced) {
      const changes = (['sisId', 'externalId', 'secondaryExternalId'] as const).filter(
        (k) => f[k] !== undefined && f[k] !== u[k],
      );
      if (changes.length > 0) {
        throw unprocessable(
          `${where}: user ${id} is synced by an active integration; ${changes.join(', ')} cannot be updated`,
        );
      }
    }
    if (f.email !== undefined) {
      const email = f.email.toLowerCase();
      const other = st.school.users.find((x) => x.id !== id && x.email.toLowerCase() === email);
      if (other) throw new HttpError(409, `${where}.email ${email} already belongs to user ${other.id}`);
    }
    return { u, f };
  });
  for (const { u, f } of planned) applyUser(st, u, f, false);
  st.version++;
  // The service answers in its own order (by id), not the request's.
  const out = [...new Set(planned.map((p) => p.u))].sort((a, b) => a.id - b.id);
  return { users: out.map(wire.userWriteResult) };
}

const REASON_LIMIT = 4096;

function absenceFields(st: SandboxState, o: Json, where: string, creating: boolean) {
  const studentId = num(o, 'studentId', where, creating);
  const start = instant(o, 'startDate', where, creating);
  const end = instant(o, 'endDate', where, creating);
  const explained = bool(o, 'explained', where, creating);
  const reason = str(o, 'reason', where, creating);
  if (studentId !== undefined && !st.students.has(studentId))
    throw unprocessable(`${where}.studentId: no student ${studentId}`);
  return { studentId, start, end, explained, reason: reason?.slice(0, REASON_LIMIT) };
}

export function createAbsences(st: SandboxState, body: unknown): Json {
  const list = items(body, 'preExplainedAbsences');
  const planned = list.map((o, i) => {
    const where = `preExplainedAbsences[${i}]`;
    const f = absenceFields(st, o, where, true);
    if (f.end! < f.start!) throw unprocessable(`${where}: endDate must not be before startDate`);
    return f;
  });
  const out: SAbsence[] = planned.map((f) => {
    const a: SAbsence = {
      id: st.nextId('absence'),
      studentId: f.studentId!,
      start: f.start!,
      end: f.end!,
      explained: f.explained!,
      reason: f.reason!,
      updatedAt: st.stamp(),
    };
    st.school.absences.push(a);
    st.absences.set(a.id, a);
    return a;
  });
  st.version++;
  return { data: out.map(wire.absence) };
}

export function updateAbsences(st: SandboxState, body: unknown): Json {
  const list = items(body, 'preExplainedAbsences');
  const planned = list.map((o, i) => {
    const where = `preExplainedAbsences[${i}]`;
    const id = num(o, 'id', where, true)!;
    const a = st.absences.get(id);
    if (!a) throw notFound(`${where}.id: no pre-explained absence ${id}`);
    const f = absenceFields(st, o, where, false);
    if ((f.end ?? a.end) < (f.start ?? a.start))
      throw unprocessable(`${where}: endDate must not be before startDate`);
    return { a, f };
  });
  for (const { a, f } of planned) {
    if (f.studentId !== undefined) a.studentId = f.studentId;
    if (f.start !== undefined) a.start = f.start;
    if (f.end !== undefined) a.end = f.end;
    if (f.explained !== undefined) a.explained = f.explained;
    if (f.reason !== undefined) a.reason = f.reason;
    a.updatedAt = st.stamp();
  }
  st.version++;
  return { data: planned.map((p) => wire.absence(p.a)) };
}

export function deleteAbsences(st: SandboxState, body: unknown): Json {
  if (!isObject(body)) throw bad('request body must be a JSON object');
  const ids = numArray(body, 'ids', 'body');
  if (!ids || ids.length === 0) throw bad('ids must be a non-empty array of pre-explained absence ids');
  for (const id of ids) if (!st.absences.has(id)) throw notFound(`ids: no pre-explained absence ${id}`);
  const gone = new Set(ids);
  for (const id of ids) st.absences.delete(id);
  const kept = st.school.absences.filter((a) => !gone.has(a.id));
  st.school.absences.length = 0;
  st.school.absences.push(...kept);
  st.version++;
  return {};
}
