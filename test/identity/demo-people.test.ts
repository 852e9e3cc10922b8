// The people the demo's sign-in page offers (identity/demo-people.ts), picked from a sandbox school pulled over
// HTTP into a real SQLite store: an admin, the manager seeing most teams, the two coaches with most teams of their
// own, and a deactivated account; each with an address, and none twice.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StaffUser, Team } from '../../src/domain/types.ts';
import { pickDemoStaff } from '../../src/identity/demo-people.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { fullPull, openTestStore, type TestStore, testSchool } from '../sync/helpers.ts';

const NOW = '2026-03-16T09:00:00.000Z';
let sandbox: Sandbox;
let ts: TestStore;
let staff: StaffUser[];
let teams: Team[];
beforeAll(async () => {
  sandbox = await startSandbox({ seed: 45, scale: 'small', now: NOW });
  // The small school has nobody deactivated: one member of staff is, upstream, before the pull.
  const leaver = sandbox.school.users.filter((u) => u.email && !u.isAdmin && !u.isManager).at(-1)!;
  leaver.frozen = true;
  ts = await openTestStore('sqlite');
  await fullPull(ts.store, sandbox, NOW);
  const school = testSchool(sandbox).id;
  staff = (await ts.store.records.list(school, 'staff')) as unknown as StaffUser[];
  teams = await ts.store.records.list(school, 'teams');
});
afterAll(async () => {
  await ts?.cleanup();
  await sandbox?.close();
});

it('offers an admin, the widest manager, the two busiest coaches and a deactivated account', () => {
  const people = pickDemoStaff(staff, teams);
  expect(people.map((p) => p.role)).toEqual(['admin', 'manager', 'staff', 'staff', 'frozen']);
  expect(new Set(people.map((p) => p.id)).size).toBe(people.length);
  const byId = new Map(staff.map((s) => [String(s.id), s]));
  for (const p of people) {
    const s = byId.get(p.id)!;
    expect(p.email).toBe(s.email);
    expect(p.name).toBe(`${s.firstName} ${s.lastName}`);
  }
  const [admin, manager, coach1, coach2, frozen] = people.map((p) => byId.get(p.id)!);
  expect(admin!.isAdmin && !admin!.frozen).toBe(true);
  const teamsOf = (s: StaffUser) => staffAccess(s, teams).teamIds.size;
  const managers = staff.filter((s) => s.email && s.isManager && !s.isAdmin && !s.frozen);
  expect(teamsOf(manager!)).toBe(Math.max(...managers.map(teamsOf)));
  expect(people[1]!.note).toBe(`${teamsOf(manager!)} teams of their activities and departments`);
  const own = (s: StaffUser) => staffAccess(s, teams).assignedTeamIds.size;
  const coaches = staff.filter((s) => s.email && !s.isManager && !s.isAdmin && !s.frozen && own(s) > 0);
  const busiest = coaches.map(own).sort((a, b) => b - a);
  expect([own(coach1!), own(coach2!)]).toEqual(busiest.slice(0, 2));
  expect(own(coach1!) > own(coach2!) || coach1!.id < coach2!.id).toBe(true);
  expect(people[2]!.note).toMatch(/^coach of \d+ teams?$/);
  expect(frozen!.frozen).toBe(true);
  expect(people[4]!.note).toBe('deactivated upstream: refused');
});

it('offers only whom the school has, and nobody without an address', () => {
  const plain = staff.filter((s) => !s.isAdmin && !s.isManager && !s.frozen);
  expect(pickDemoStaff(plain, teams).map((p) => p.role)).toEqual(['staff', 'staff']);
  const withoutAddress = staff.map((s) => ({ ...s, email: null })) as unknown as StaffUser[];
  expect(pickDemoStaff(withoutAddress, teams)).toEqual([]);
});

it('passes over a deactivated admin or coach and a member of staff with no team, and counts one team as one', () => {
  const [admin, , coach] = pickDemoStaff(staff, teams);
  const frozen = (id: string) => staff.map((s) => (String(s.id) === id ? { ...s, frozen: true } : s));
  const roles = pickDemoStaff(frozen(admin!.id), teams);
  expect(roles.filter((p) => p.role === 'admin').map((p) => p.id)).not.toContain(admin!.id);
  expect(
    pickDemoStaff(frozen(coach!.id), teams)
      .filter((p) => p.role === 'staff')
      .map((p) => p.id),
  ).not.toContain(coach!.id);
  expect(pickDemoStaff(staff, []).filter((p) => p.role === 'staff')).toEqual([]);
  const one = teams.filter(
    (t) => staffAccess(staff.find((s) => String(s.id) === coach!.id)!, [t]).assignedTeamIds.size,
  );
  const single = pickDemoStaff(staff, one.slice(0, 1)).find((p) => p.id === coach!.id);
  expect(single?.note).toBe('coach of 1 team');
});
