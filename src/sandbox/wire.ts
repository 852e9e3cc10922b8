// Internal records to the service's wire shapes, exactly as the spec's resource tables and examples show them.
// A few "seen in the wild" shapes are deliberate: `organisationScore` as a string and `opponentScore` as a number,
// `attendanceFlags[].id` as a number, `seasonActivityOption.id` as a string, absences' `startDate` as
// `YYYY-MM-DD HH:mm:ss` and `endDate` with milliseconds.
import type {
  SAbsence,
  SActivity,
  SActivitySelection,
  SAttendanceRecord,
  SIncident,
  SLocation,
  SMembership,
  SSession,
  SStudent,
  STeam,
  SUser,
} from './model.ts';
import { activeAt, type SandboxState } from './state.ts';
import { iso, sqlDateTime } from './time.ts';

type Json = Record<string, unknown>;

const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

function deptRef(st: SandboxState, id: number): Json {
  const d = st.departments.get(id);
  return { id, name: d?.name ?? '' };
}

function yearGroupRef(st: SandboxState, id: number): Json {
  const y = st.yearGroups.get(id);
  return { id, name: y?.name ?? '' };
}

function userRef(st: SandboxState, id: number | null): Json | null {
  if (id === null) return null;
  const u = st.users.get(id);
  if (!u) return null;
  return { id: u.id, firstName: u.firstName, lastName: u.lastName, sisId: u.sisId };
}

export function locationData(st: SandboxState, l: SLocation, single: boolean): Json {
  const owner = st.organisations.get(l.ownerId);
  const out: Json = {
    id: l.id,
    name: l.name,
    address: l.address,
    latitude: l.latitude,
    longitude: l.longitude,
    owner: owner
      ? {
          id: owner.id,
          name: owner.name,
          acronym: owner.acronym,
          shortName: owner.shortName,
          state: owner.state,
        }
      : null,
  };
  if (single) out.subLocations = l.subLocations;
  return out;
}

export interface SessionShape {
  single: boolean;
  includeTeams: boolean;
  includeStaff: boolean;
  includeRoundName: boolean;
  /** With `includeSisIds` and `sisIds`: the matching students' SIS ids. */
  matchSisIds?: Set<string>;
}

export function session(st: SandboxState, s: SSession, shape: SessionShape): Json {
  const a = st.activities.get(s.activityId);
  const activity: Json = {
    id: s.activityId,
    name: a?.name ?? '',
    department: a ? deptRef(st, a.departmentId) : null,
  };
  if (!shape.single) activity.colour = a?.colour ?? 0;
  activity.hexColor = a?.hexColor ?? s.hexColor;
  const loc = s.locationId === null ? undefined : st.locations.get(s.locationId);
  const out: Json = {
    id: s.id,
    title: s.title,
    notes: s.notes,
    studentParentNotes: s.studentParentNotes,
    opponent: s.opponent,
    bye: s.bye,
    cancelled: s.cancelled,
    scored: s.scored,
    hexColor: s.hexColor,
    startDateTime: iso(s.start),
    endDateTime: iso(s.end),
    creatorUserId: s.creatorUserId,
    seriesId: s.seriesId,
    organisationScore: s.organisationScore === null ? null : String(s.organisationScore),
    opponentScore: s.opponentScore,
    result: s.result,
    remindStaff: s.remindStaff,
    status: s.status,
    activity,
    locationData: loc ? locationData(st, loc, shape.single) : null,
  };
  if (!shape.single) out.feedback = [];
  if (shape.includeStaff) {
    out.assignedStaff = s.staffIds.flatMap((id) => {
      const u = st.users.get(id);
      return u
        ? [
            {
              id: u.id,
              firstName: u.firstName,
              lastName: u.lastName,
              sisId: u.sisId,
              externalId: u.externalId,
              secondaryExternalId: u.secondaryExternalId,
            },
          ]
        : [];
    });
  }
  if (shape.includeTeams) {
    out.teams = s.teamIds.flatMap((id) => {
      const t = st.teams.get(id);
      if (!t) return [];
      const c = t.categoryId === null ? undefined : st.categories.get(t.categoryId);
      return [
        {
          id: t.id,
          name: t.name,
          category: c ? { id: c.id, name: c.name, sortOrder: c.sortOrder } : null,
          subcategory: t.subcategory,
          customFieldsData: s.teamCustomFieldsData[t.id] ?? {},
        },
      ];
    });
    out.students = s.rosterIds.flatMap((id) => {
      const p = st.students.get(id);
      return p
        ? [
            {
              id: p.id,
              firstName: p.firstName,
              lastName: p.lastName,
              smsId: p.sisId,
              yearGroup: yearGroupRef(st, p.yearGroupId),
            },
          ]
        : [];
    });
  }
  if (shape.includeRoundName && s.scored) out.roundName = s.roundName;
  if (shape.matchSisIds) {
    out.sisIds = s.rosterIds.flatMap((id) => {
      const sis = st.students.get(id)?.sisId;
      return sis !== undefined && shape.matchSisIds!.has(sis) ? [sis] : [];
    });
  }
  if (shape.single) {
    out.opponentTeam = s.opponentTeam;
    out.opponentOrganisation = s.opponentOrganisation;
    out.displayScore =
      s.organisationScore === null || s.opponentScore === null
        ? null
        : `${s.organisationScore} - ${s.opponentScore}`;
    out.resultNotes = s.resultNotes;
    out.customFieldsData = s.customFieldsData;
    out.optional = s.optional;
  }
  return out;
}

export function customFieldsMetadata(st: SandboxState): Json {
  const out: Json = {};
  for (const f of st.school.customFields) {
    out[f.key] = {
      label: f.label,
      dataType: f.dataType,
      showToUserTypes: f.showToUserTypes,
      showAfterField: f.showAfterField,
    };
  }
  return out;
}

export interface TeamShape {
  single: boolean;
  includeStaff: boolean;
  includeStudents: boolean;
  includePositions: boolean;
  asOf: number;
  /** The sandbox's now, for `absentToday`. */
  now: number;
}

export function team(st: SandboxState, t: STeam, shape: TeamShape): Json {
  const a = st.activities.get(t.activityId);
  const c = t.categoryId === null ? undefined : st.categories.get(t.categoryId);
  const activity: Json = {
    id: t.activityId,
    name: a?.name ?? '',
    sisCode: a?.smsCode ?? null,
    department: a ? deptRef(st, a.departmentId) : null,
  };
  if (shape.single)
    activity.accessRights = { moveStudentsWithoutApproval: a?.moveStudentsWithoutApproval ?? false };
  const out: Json = {
    id: t.id,
    name: t.name,
    sisId: t.sisId,
    hidden: t.hidden,
    playersRanked: t.playersRanked,
  };
  if (c) out.category = { id: c.id, name: c.name };
  if (t.subcategory) out.subcategory = t.subcategory;
  out.activity = activity;
  if (shape.single || shape.includeStaff) {
    out.assignedStaff = t.staff
      .filter((s) => activeAt(s, shape.asOf))
      .flatMap((s) => {
        const u = st.users.get(s.userId);
        return u ? [{ id: u.id, firstName: u.firstName, lastName: u.lastName, sisId: u.sisId }] : [];
      });
  }
  if (shape.single || shape.includeStudents) {
    const members = (st.membershipsByTeam.get(t.id) ?? []).filter((m) => activeAt(m, shape.asOf));
    out.students = members.flatMap((m) => {
      const p = st.students.get(m.studentId);
      return p ? [teamMember(st, p, m, shape)] : [];
    });
  }
  if (shape.single || shape.includePositions) out.positions = t.positions;
  if (shape.single) out.studentSortType = t.studentSortType;
  return out;
}

function teamMember(st: SandboxState, p: SStudent, m: SMembership, shape: TeamShape): Json {
  const out: Json = {
    studentId: p.id,
    firstName: p.firstName,
    legalFirstName: p.legalFirstName,
    lastName: p.lastName,
    smsId: p.sisId,
    yearGroup: yearGroupRef(st, p.yearGroupId),
    boarder: p.boarder,
    captain: m.captain,
    jerseyNumber: m.jerseyNumber,
  };
  if (m.positionId !== null) out.positionId = m.positionId;
  if (shape.single) {
    let absence: SAbsence | undefined;
    for (const a of st.absences.values()) {
      if (a.studentId === p.id && a.start <= shape.now && a.end > shape.now) {
        absence = a;
        break;
      }
    }
    out.id = p.id;
    out.email = p.email;
    out.guardians = p.guardians;
    out.medicalConditions = p.medicalConditions;
    out.sortOrder = m.sortOrder;
    out.absentToday = absence !== undefined;
    out.absentReason = absence?.reason ?? '';
  }
  return out;
}

export function student(p: SStudent): Json {
  const out: Json = {
    id: p.id,
    legalFirstName: p.legalFirstName,
    firstName: p.firstName,
    lastName: p.lastName,
    sisId: p.sisId,
  };
  if (p.secondarySisId !== null) out.secondarySisId = p.secondarySisId;
  out.yearGroupId = p.yearGroupId;
  return out;
}

export function studentTeam(st: SandboxState, m: SMembership): Json {
  const p = st.students.get(m.studentId);
  const t = st.teams.get(m.teamId);
  const a = t ? st.activities.get(t.activityId) : undefined;
  return {
    id: m.id,
    student: { id: m.studentId, fullName: p ? `${p.firstName} ${p.lastName}` : '', smsId: p?.sisId ?? null },
    team: {
      id: m.teamId,
      name: t?.name ?? '',
      sisId: t?.sisId ?? null,
      activity: { id: t?.activityId ?? 0, name: a?.name ?? '' },
    },
    startDateTime: isoOrNull(m.start),
    endDateTime: isoOrNull(m.end),
  };
}

function studentRef(st: SandboxState, id: number): Json {
  const p = st.students.get(id);
  return {
    id,
    firstName: p?.firstName ?? '',
    legalFirstName: p?.legalFirstName ?? null,
    lastName: p?.lastName ?? '',
    smsId: p?.sisId ?? null,
    yearGroup: p ? yearGroupRef(st, p.yearGroupId) : null,
  };
}

export function attendanceRecord(st: SandboxState, r: SAttendanceRecord): Json {
  const s = st.sessions.get(r.sessionId);
  const a = s ? st.activities.get(s.activityId) : undefined;
  const t = r.teamId === null ? undefined : st.teams.get(r.teamId);
  const c = t && t.categoryId !== null ? st.categories.get(t.categoryId) : undefined;
  const flags = st.school.attendanceFlags;
  return {
    id: r.id,
    absent: r.absent,
    explained: r.explained,
    comment: r.comment,
    addedToRoll: r.addedToRoll,
    attendanceFlags: r.flagIds.map((id) => ({ id, name: flags.find((f) => f.id === id)?.name ?? '' })),
    student: studentRef(st, r.studentId),
    session: {
      id: r.sessionId,
      title: s?.title ?? null,
      activity: { id: a?.id ?? 0, name: a?.name ?? '' },
      startDateTime: s ? iso(s.start) : null,
      endDateTime: s ? iso(s.end) : null,
    },
    team: t ? { id: t.id, name: t.name, category: c ? { id: c.id, name: c.name } : null } : null,
    roll: {
      id: r.rollId,
      timeMarked: isoOrNull(r.timeMarked),
      timeEdited: isoOrNull(r.timeEdited),
      markedByUser: userRef(st, r.markedByUserId),
      editedByUser: userRef(st, r.editedByUserId),
    },
    updatedTimestamp: iso(r.updatedAt),
    updatedByUser: userRef(st, r.updatedByUserId),
  };
}

export function user(st: SandboxState, u: SUser): Json {
  const out: Json = {
    id: u.id,
    firstName: u.firstName,
    lastName: u.lastName,
    email: u.email,
  };
  if (u.mobileNumber !== null) out.mobileNumber = u.mobileNumber;
  out.isAdmin = u.isAdmin;
  out.isManager = u.isManager;
  if (u.employeeId !== null) out.employeeId = u.employeeId;
  out.frozen = u.frozen;
  if (u.wwccNumber !== null) out.wwccNumber = u.wwccNumber;
  if (u.wwccExpiryDate !== null) out.wwccExpiryDate = iso(u.wwccExpiryDate);
  out.updatedDetails = u.updatedDetails;
  out.sisId = u.sisId;
  out.externalId = u.externalId;
  out.secondaryExternalId = u.secondaryExternalId;
  out.payment = u.payment;
  out.inviteEmailLastSentTimestamp = isoOrNull(u.inviteEmailLastSentTimestamp);
  out.activitiesPermissions = u.activityIds.map((id) => ({
    activityId: id,
    activityName: st.activities.get(id)?.name ?? '',
  }));
  out.departments = u.departmentIds.map((id) => deptRef(st, id));
  return out;
}

/** The POST/PATCH /users response item. */
export function userWriteResult(u: SUser): Json {
  return {
    id: u.id,
    sisId: u.sisId,
    externalId: u.externalId,
    secondaryExternalId: u.secondaryExternalId,
    firstName: u.firstName,
    lastName: u.lastName,
    email: u.email.toLowerCase(),
    userType: u.isAdmin ? 'admin' : u.isManager ? 'manager' : 'staff',
    departments: u.isAdmin ? u.departmentIds : [],
    activities: u.isAdmin ? [] : u.activityIds,
    payrollId: u.employeeId,
    mobileNumber: u.mobileNumber,
    activated: !u.frozen,
    payment: u.payment,
  };
}

export function incident(st: SandboxState, i: SIncident): Json {
  const a = st.activities.get(i.activityId);
  const s = i.sessionId === null ? undefined : st.sessions.get(i.sessionId);
  const staff = st.users.get(i.staffUserId);
  return {
    id: i.id,
    location: i.location,
    studentConcerned: studentRef(st, i.studentId),
    fields: i.fields,
    dateTime: iso(i.dateTime),
    concussionStatus: i.concussionStatus,
    returnToPlay: i.returnToPlay ? { date: iso(i.returnToPlay.date), reason: i.returnToPlay.reason } : null,
    activity: { id: i.activityId, name: a?.name ?? '' },
    template: st.school.incidentTemplate,
    shift: i.sessionId === null ? null : { id: i.sessionId, title: s?.title ?? null },
    staffMember: { id: i.staffUserId, firstName: staff?.firstName ?? '', lastName: staff?.lastName ?? '' },
    archived: i.archived,
  };
}

export function location(l: SLocation): Json {
  return {
    id: l.id,
    name: l.name,
    address: l.address,
    latitude: l.latitude,
    longitude: l.longitude,
    archived: l.archived,
  };
}

export function activity(st: SandboxState, a: SActivity): Json {
  return {
    id: a.id,
    name: a.name,
    code: a.code,
    emoji: a.emoji,
    archived: a.archived,
    timesheetsEnabled: a.timesheetsEnabled,
    hexColor: a.hexColor,
    hexContrastColor: a.hexContrastColor,
    colour: a.colour,
    smsCode: a.smsCode,
    rollMode: a.rollMode,
    activityType: a.activityType,
    archivedByUserId: a.archivedByUserId,
    archivedTimestamp: isoOrNull(a.archivedTimestamp),
    department: deptRef(st, a.departmentId),
    accessRights: { moveStudentsWithoutApproval: a.moveStudentsWithoutApproval },
    defaultPayGradeId: null,
  };
}

export function activitySelection(st: SandboxState, x: SActivitySelection): Json {
  const a = st.activities.get(x.activityId);
  const season = st.school.seasons.find((s) => s.id === x.seasonId);
  const option = season?.options.find((o) => o.id === x.seasonActivityOptionId);
  const p = st.students.get(x.studentId);
  return {
    id: x.id,
    selectedTimestamp: iso(x.selectedTimestamp),
    selectedByGuardianId: x.selectedByGuardianId,
    onWaitlist: x.onWaitlist,
    activity: {
      id: x.activityId,
      name: a?.name ?? '',
      code: a?.code ?? '',
      smsCode: a?.smsCode ?? '',
      description: a?.description ?? '',
      activityType: a?.activityType ?? '',
      emoji: a?.emoji ?? '',
      hexColor: a?.hexColor ?? '',
      hexContrastColor: a?.hexContrastColor ?? '',
    },
    season: season
      ? {
          id: season.id,
          name: season.name,
          hidden: season.hidden,
          activitySelectionOpenTimestamp: isoOrNull(season.open),
          activitySelectionCloseTimestamp: isoOrNull(season.close),
        }
      : null,
    seasonActivityOption: { id: option?.id ?? null, label: option?.label ?? null },
    student: {
      id: x.studentId,
      smsId: p?.sisId ?? null,
      firstName: p?.firstName ?? '',
      lastName: p?.lastName ?? '',
      email: p?.email ?? '',
      gender: p?.gender ?? null,
      yearGroup: p ? yearGroupRef(st, p.yearGroupId) : null,
    },
    invoice: x.invoice,
  };
}

export function absence(a: SAbsence): Json {
  return {
    id: a.id,
    studentId: a.studentId,
    startDate: sqlDateTime(a.start),
    endDate: iso(a.end),
    explained: a.explained,
    reason: a.reason,
  };
}
