// Who is asking, as the staff pages see it: a signed-in person with their memberships, or the ADMIN_TOKEN bearer
// (with a session when the token was typed into the break-glass form). Set by identify (staff-request-auth.ts).
import type { Response } from 'express';
import type { StaffMembership } from '../identity/directory.ts';
import type { StaffAccess } from '../identity/roles.ts';
import type { CurrentSession } from '../identity/staff-sessions.ts';
import type { SchoolId } from '../store/types.ts';

export const ADMIN_TOKEN_ACTOR = 'admin token';

export type Principal =
  | {
      kind: 'person';
      email: string;
      displayName: string | null;
      session: CurrentSession;
      memberships: StaffMembership[];
    }
  | { kind: 'admin-token'; session: CurrentSession | null };

export function principalOf(res: Response): Principal | null {
  return (res.locals.principal as Principal | undefined) ?? null;
}

export function actorOf(p: Principal): string {
  return p.kind === 'admin-token' ? ADMIN_TOKEN_ACTOR : p.email;
}

/** What the principal may do in one school: 'all' (admin, admin token), an access, or null (not staff there). */
export function accessIn(p: Principal, schoolId: SchoolId): StaffAccess | 'all' | null {
  if (p.kind === 'admin-token') return 'all';
  const m = p.memberships.find((x) => x.school.id === schoolId);
  if (!m) return null;
  return m.access.role === 'admin' ? 'all' : m.access;
}

export function isAdminSomewhere(p: Principal): boolean {
  return p.kind === 'admin-token' || p.memberships.some((m) => m.access.role === 'admin');
}

export function csrfOf(p: Principal): string | null {
  return p.session?.csrf ?? null;
}
