// The school's people: staff users, and students with their guardians and medical conditions.

import type { SDepartment, SGuardian, SMedicalCondition, SStudent, SUser, SYearGroup } from '../model.ts';
import {
  asciiSlug,
  distinctName,
  type FullName,
  GUARDIAN_RELATIONSHIPS,
  givenNameFor,
  MEDICAL_CONDITIONS,
  type PersonName,
  personName,
} from '../name-pools.ts';
import type { Rng } from '../prng.ts';
import { DAY } from '../time.ts';
import { type Basis, pastStamp, YEAR_GROUPS } from './basis.ts';

export function makeStaff(basis: Basis, staffRng: Rng, departments: readonly SDepartment[]): SUser[] {
  const { spec, nowMs } = basis;
  const users: SUser[] = [];
  const usedEmails = new Set<string>();
  for (let i = 0; i < spec.staff; i++) {
    const id = 201 + i;
    const n = personName(staffRng, staffRng.chance(0.6) ? 'english' : undefined);
    let local = `${asciiSlug(n.firstName)}.${asciiSlug(n.lastName)}`;
    if (local.startsWith('.') || local.endsWith('.')) local = `staff${id}`;
    let email = `${local}@hillcrest.example.edu`;
    if (usedEmails.has(email)) email = `${local}${id}@hillcrest.example.edu`;
    usedEmails.add(email);
    const isAdmin = i < Math.max(1, Math.round(spec.staff / 60));
    const isManager = !isAdmin && i < Math.max(2, Math.round(spec.staff / 15));
    const integrationSynced = staffRng.chance(0.3);
    const legacySis = !integrationSynced && staffRng.chance(0.2);
    const sisId = legacySis ? `T${1000 + i}` : null;
    users.push({
      id,
      firstName: n.firstName,
      lastName: n.lastName,
      email,
      mobileNumber: staffRng.chance(0.8) ? `04${String(staffRng.int(10000000, 99999999))}` : null,
      isAdmin,
      isManager,
      employeeId: staffRng.chance(0.7) ? `E${String(5000 + i)}` : null,
      frozen: i >= 3 && staffRng.chance(0.07),
      wwccNumber: staffRng.chance(0.85) ? `WWC${String(staffRng.int(1000000, 9999999))}E` : null,
      wwccExpiryDate: staffRng.chance(0.85) ? nowMs + staffRng.int(-60, 1500) * DAY : null,
      updatedDetails: staffRng.chance(0.75),
      sisId,
      externalId: integrationSynced ? `HR-${String(30000 + i)}` : null,
      secondaryExternalId: legacySis
        ? sisId
        : integrationSynced && staffRng.chance(0.5)
          ? `AD\\${local}`
          : null,
      payment: staffRng.chance(0.6) ? 'ts' : 'na',
      inviteEmailLastSentTimestamp: staffRng.chance(0.9) ? pastStamp(basis, staffRng, 700) : null,
      activityIds: [],
      departmentIds: isAdmin ? departments.map((d) => d.id) : [],
      integrationSynced,
      updatedAt: pastStamp(basis, staffRng, 300),
    });
  }
  return users;
}

/** The next free guardian and medical-condition ids: both run on across students. */
interface PersonIds {
  guardian: number;
  condition: number;
}

export function makeStudents(basis: Basis, stuRng: Rng, yearGroups: readonly SYearGroup[]): SStudent[] {
  const students: SStudent[] = [];
  const ids: PersonIds = { guardian: 90001, condition: 1 };
  const names = new Set<string>();
  const keys = (n: FullName) =>
    [`${n.preferred}|${n.last}`, `${n.legal}|${n.last}`].map((k) => k.toLowerCase());
  const taken = (n: FullName) => keys(n).some((k) => names.has(k));
  for (let i = 0; i < basis.spec.students; i++) {
    const id = 5001 + i;
    const n = personName(stuRng);
    const legalFirstName = stuRng.chance(0.08) ? null : n.legalFirstName;
    const guardians = makeGuardians(stuRng, n, ids);
    const medicalConditions = makeConditions(stuRng, ids);
    const sisId = `S${String(100000 + i * 7 + stuRng.int(0, 6))}`;
    // Drawn in the order they always were, so the rest of the school stays the same.
    const secondarySisId = stuRng.chance(0.3) ? `BOS${String(stuRng.int(10000000, 99999999))}` : null;
    const yearGroupId = (yearGroups[stuRng.int(0, YEAR_GROUPS.length - 1)] as SYearGroup).id;
    const current = !stuRng.chance(0.05);
    const gender = stuRng.weighted([
      ['Male', 48],
      ['Female', 48],
      ['Non-binary', 2],
      [null, 2],
    ] as const);
    // A boy or a girl gets a name that is a boy's or a girl's (or either) from the same culture.
    const [legal, preferred] = givenNameFor(n.culture, gender, [n.legalFirstName, n.firstName], id);
    // Namesakes are as rare as in a real school; a renamed child's guardians who shared its surname still do.
    const name = distinctName(n.culture, gender, { legal, preferred, last: n.lastName }, id, taken);
    for (const k of keys(name)) names.add(k);
    for (const g of guardians) if (g.lastName === n.lastName) g.lastName = name.last;
    students.push({
      id,
      firstName: name.preferred,
      legalFirstName: legalFirstName === null ? null : name.legal,
      lastName: name.last,
      sisId,
      secondarySisId,
      yearGroupId,
      current,
      email: `${sisId.toLowerCase()}@students.hillcrest.example.edu`,
      gender,
      boarder: stuRng.chance(0.12),
      culture: n.culture,
      guardians,
      medicalConditions,
    });
  }
  return students;
}

function makeGuardians(stuRng: Rng, child: PersonName, ids: PersonIds): SGuardian[] {
  const guardians: SGuardian[] = [];
  const guardianCount = stuRng.weighted([
    [1, 3],
    [2, 6],
    [3, 1],
  ] as const);
  for (let g = 0; g < guardianCount; g++) {
    const gn = personName(stuRng, stuRng.chance(0.85) ? child.culture : undefined);
    const slug = asciiSlug(gn.firstName) || `parent${ids.guardian}`;
    guardians.push({
      id: ids.guardian,
      firstName: gn.firstName,
      lastName: stuRng.chance(0.8) ? child.lastName : gn.lastName,
      relationship: stuRng.pick(GUARDIAN_RELATIONSHIPS),
      email: `${slug}.${ids.guardian}@family.example.com`,
      mobileNumber: `04${String(stuRng.int(10000000, 99999999))}`,
    });
    ids.guardian++;
  }
  return guardians;
}

function makeConditions(stuRng: Rng, ids: PersonIds): SMedicalCondition[] {
  const conditions: SMedicalCondition[] = [];
  if (stuRng.chance(0.18)) {
    for (const c of stuRng.sample(MEDICAL_CONDITIONS, stuRng.int(1, 2))) {
      conditions.push({ id: ids.condition++, name: c.name, notes: c.notes });
    }
  }
  return conditions;
}
