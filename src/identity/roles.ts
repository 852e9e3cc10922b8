// What a member of staff may see, derived only from the upstream data already pulled (never from a second list
// to maintain): `isAdmin` → every team of the school; `isManager` → the teams of the activities in their
// `activitiesPermissions` and of their departments; other staff → the teams whose `assignedStaff` lists them
// today, plus the teams of the activities in their `activitiesPermissions`. Pure: no I/O, no clock.
import type { Id, StaffUser, Team } from '../domain/types.ts';

export type StaffRole = 'admin' | 'manager' | 'staff';

/** Who may print templates with medical or guardian columns (config `auth.sensitiveRoles`). */
export type SensitiveRole = 'admin' | 'manager' | 'assigned' | 'staff';
export const DEFAULT_SENSITIVE_ROLES: readonly SensitiveRole[] = ['admin', 'assigned'];

type TeamLike = Pick<Team, 'id' | 'hidden' | 'staff'> & {
  activity: { id: Id; department: { id: Id } | null };
};
type StaffLike = Pick<StaffUser, 'id' | 'isAdmin' | 'isManager' | 'frozen' | 'activityIds' | 'departmentIds'>;

export interface StaffAccess {
  staffId: Id;
  role: StaffRole;
  /** Admins: every team, including ones created after this was computed. */
  allTeams: boolean;
  /** Teams the person may open (for admins: every team known when computed). */
  teamIds: ReadonlySet<Id>;
  /** Teams whose assigned staff lists the person. */
  assignedTeamIds: ReadonlySet<Id>;
}

export function roleOf(user: Pick<StaffUser, 'isAdmin' | 'isManager'>): StaffRole {
  return user.isAdmin ? 'admin' : user.isManager ? 'manager' : 'staff';
}

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export type StaffMatch<U> =
  | { kind: 'found'; user: U }
  | { kind: 'frozen'; user: U }
  | { kind: 'unknown' }
  /** Two live upstream users share the address: refusing is safer than guessing which one signs in. */
  | { kind: 'ambiguous'; users: U[] };

/** Finds the upstream staff user with this e-mail address (case-insensitive; a frozen one is reported). */
export function matchStaffByEmail<U extends Pick<StaffUser, 'email' | 'frozen'>>(
  users: readonly U[],
  email: string,
): StaffMatch<U> {
  const wanted = normaliseEmail(email);
  if (!wanted) return { kind: 'unknown' };
  const same = users.filter((u) => u.email !== null && normaliseEmail(u.email) === wanted);
  const live = same.filter((u) => !u.frozen);
  if (live.length === 1) return { kind: 'found', user: live[0]! };
  if (live.length > 1) return { kind: 'ambiguous', users: live };
  if (same.length > 0) return { kind: 'frozen', user: same[0]! };
  return { kind: 'unknown' };
}

/** The teams a person may open in one school. A frozen user sees nothing. */
export function staffAccess(user: StaffLike, teams: readonly TeamLike[]): StaffAccess {
  const role = roleOf(user);
  const assigned = new Set<Id>();
  for (const t of teams) if (t.staff.some((s) => s.id === user.id)) assigned.add(t.id);
  if (user.frozen)
    return { staffId: user.id, role, allTeams: false, teamIds: new Set(), assignedTeamIds: new Set() };
  if (role === 'admin')
    return {
      staffId: user.id,
      role,
      allTeams: true,
      teamIds: new Set(teams.map((t) => t.id)),
      assignedTeamIds: assigned,
    };
  const activities = new Set(user.activityIds);
  const departments = new Set(role === 'manager' ? user.departmentIds : []);
  const visible = new Set<Id>(assigned);
  for (const t of teams) {
    if (activities.has(t.activity.id)) visible.add(t.id);
    const dept = t.activity.department?.id;
    if (dept !== undefined && departments.has(dept)) visible.add(t.id);
  }
  return { staffId: user.id, role, allTeams: false, teamIds: visible, assignedTeamIds: assigned };
}

export function canSeeTeam(access: StaffAccess, teamId: Id): boolean {
  return access.allTeams || access.teamIds.has(teamId);
}

/**
 * Whether the person may print a template with medical or guardian columns for this team: only for a team they
 * may see, and only when one of their roles is allowed by the school.
 */
export function canPrintSensitive(
  access: StaffAccess,
  teamId: Id,
  allowed: readonly SensitiveRole[] = DEFAULT_SENSITIVE_ROLES,
): boolean {
  if (!canSeeTeam(access, teamId)) return false;
  if (allowed.includes('staff')) return true;
  if (allowed.includes('admin') && access.role === 'admin') return true;
  if (allowed.includes('manager') && access.role === 'manager') return true;
  return allowed.includes('assigned') && access.assignedTeamIds.has(teamId);
}

/** Templates that print medical conditions or guardian contacts (declared by their columns). */
export function isSensitiveTemplate(template: { columns: readonly { field: string }[] }): boolean {
  return template.columns.some((c) => c.field === 'medical' || c.field === 'guardianContact');
}
