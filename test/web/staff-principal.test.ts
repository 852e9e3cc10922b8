// Who is asking, as the staff pages see it (web/staff-principal.ts): what a person may do in each school, what the
// admin-token bearer may do, and the name the audit log gives each.
import { describe, expect, it } from 'vitest';
import type { StaffMembership } from '../../src/identity/directory.ts';
import type { StaffAccess } from '../../src/identity/roles.ts';
import type { CurrentSession } from '../../src/identity/staff-sessions.ts';
import {
  ADMIN_TOKEN_ACTOR,
  accessIn,
  actorOf,
  csrfOf,
  isAdminSomewhere,
  type Principal,
} from '../../src/web/staff-principal.ts';

const access = (role: StaffAccess['role'], teams: number[]): StaffAccess =>
  ({
    staffId: 1,
    role,
    allTeams: role === 'admin',
    teamIds: new Set(teams),
    assignedTeamIds: new Set(teams),
  }) as StaffAccess;
const membership = (schoolId: string, a: StaffAccess) =>
  ({ school: { id: schoolId, name: schoolId }, user: {}, access: a }) as unknown as StaffMembership;
const session = { csrf: 'csrf-1' } as CurrentSession;
const coach = access('staff', [3, 4]);
const person: Principal = {
  kind: 'person',
  email: 'coach@hill.edu',
  displayName: 'Coach',
  session,
  memberships: [membership('hill', coach), membership('vale', access('admin', [1]))],
};

describe('the staff principal', () => {
  it('gives a person their access where they are staff, all where they are admin, none elsewhere', () => {
    expect(accessIn(person, 'hill')).toBe(coach);
    expect(accessIn(person, 'vale')).toBe('all');
    expect(accessIn(person, 'dale')).toBeNull();
    expect(isAdminSomewhere(person)).toBe(true);
    expect(isAdminSomewhere({ ...person, memberships: [membership('hill', coach)] })).toBe(false);
    expect(actorOf(person)).toBe('coach@hill.edu');
    expect(csrfOf(person)).toBe('csrf-1');
  });

  it('gives the admin-token bearer every school, under its own name, with a CSRF token only when signed in', () => {
    const bearer: Principal = { kind: 'admin-token', session: null };
    expect(accessIn(bearer, 'anywhere')).toBe('all');
    expect(isAdminSomewhere(bearer)).toBe(true);
    expect(actorOf(bearer)).toBe(ADMIN_TOKEN_ACTOR);
    expect(csrfOf(bearer)).toBeNull();
    expect(csrfOf({ kind: 'admin-token', session })).toBe('csrf-1');
  });
});
