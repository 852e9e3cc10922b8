// The people the demo's sign-in page offers (demo-idp.ts): picked from the demo school's upstream staff, one of
// each kind of standing. Kept apart from the provider so that choosing them loads no OpenID provider.
import type { StaffUser, Team } from '../domain/types.ts';
import { type StaffRole, staffAccess } from './roles.ts';

export interface DemoPerson {
  /** The OIDC subject: the upstream staff id. */
  id: string;
  email: string;
  name: string;
  role: StaffRole | 'frozen';
  /** What signing in as this person shows, in a few words. */
  note: string;
  /** The `email_verified` claim sent; default true. */
  emailVerified?: boolean;
}

/** An admin, a manager, two coaches and one deactivated account (to see the refusal). */
export function pickDemoStaff(staff: readonly StaffUser[], teams: readonly Team[]): DemoPerson[] {
  const withEmail = staff.filter((s) => s.email);
  const name = (s: StaffUser) => `${s.firstName} ${s.lastName}`;
  const out: DemoPerson[] = [];
  const admin = withEmail.find((s) => s.isAdmin && !s.frozen);
  if (admin)
    out.push({
      id: String(admin.id),
      email: admin.email!,
      name: name(admin),
      role: 'admin',
      note: 'every team',
    });
  const manager = withEmail
    .filter((s) => s.isManager && !s.isAdmin && !s.frozen)
    .map((s) => ({ s, n: staffAccess(s, teams).teamIds.size }))
    .sort((a, b) => b.n - a.n)[0];
  if (manager)
    out.push({
      id: String(manager.s.id),
      email: manager.s.email!,
      name: name(manager.s),
      role: 'manager',
      note: `${manager.n} teams of their activities and departments`,
    });
  const coaches = withEmail
    .filter((s) => !s.isManager && !s.isAdmin && !s.frozen)
    .map((s) => ({ s, a: staffAccess(s, teams) }))
    .filter((c) => c.a.assignedTeamIds.size > 0)
    .sort((x, y) => y.a.assignedTeamIds.size - x.a.assignedTeamIds.size || x.s.id - y.s.id)
    .slice(0, 2);
  for (const c of coaches)
    out.push({
      id: String(c.s.id),
      email: c.s.email!,
      name: name(c.s),
      role: 'staff',
      note: `coach of ${c.a.assignedTeamIds.size} team${c.a.assignedTeamIds.size === 1 ? '' : 's'}`,
    });
  const frozen = withEmail.find((s) => s.frozen);
  if (frozen)
    out.push({
      id: String(frozen.id),
      email: frozen.email!,
      name: name(frozen),
      role: 'frozen',
      note: 'deactivated upstream: refused',
    });
  return out;
}
