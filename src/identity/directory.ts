// Who a signed-in address is, school by school: the upstream staff user with that e-mail (already pulled into
// the store) and what their role lets them see. Re-derived from the snapshot whenever it changes, so an upstream
// change (a coach assigned to a team, a user frozen) applies at the next pull; cached per data version.
import { LRUCache } from 'lru-cache';
import type { StaffUser } from '../domain/types.ts';
import type { SchoolId, Store } from '../store/types.ts';
import { matchStaffByEmail, normaliseEmail, type StaffAccess, staffAccess } from './roles.ts';

export interface SchoolRef {
  id: SchoolId;
  name: string;
}

/** A person's standing in one school where they are (live) staff. */
export interface StaffMembership {
  school: SchoolRef;
  user: StaffUser;
  access: StaffAccess;
}

export type Refusal = 'unknown' | 'frozen' | 'ambiguous';

export interface Lookup {
  memberships: StaffMembership[];
  /** Why nobody matched (when memberships is empty): the worst finding over all schools. */
  refusal: Refusal | null;
}

export class StaffDirectory {
  readonly #store: Pick<Store, 'records'>;
  readonly #schools: readonly SchoolRef[];
  readonly #cache = new LRUCache<
    string,
    { version: number; result: Lookup['memberships'][number] | Refusal }
  >({
    max: 5_000,
  });

  constructor(store: Pick<Store, 'records'>, schools: readonly SchoolRef[]) {
    this.#store = store;
    this.#schools = schools;
  }

  get schools(): readonly SchoolRef[] {
    return this.#schools;
  }

  async lookup(email: string): Promise<Lookup> {
    const wanted = normaliseEmail(email);
    const memberships: StaffMembership[] = [];
    const refusals = new Set<Refusal>();
    for (const school of this.#schools) {
      const found = await this.#inSchool(school, wanted);
      if (typeof found === 'string') refusals.add(found);
      else memberships.push(found);
    }
    const refusal = memberships.length
      ? null
      : refusals.has('frozen')
        ? 'frozen'
        : refusals.has('ambiguous')
          ? 'ambiguous'
          : 'unknown';
    return { memberships, refusal };
  }

  async #inSchool(school: SchoolRef, email: string): Promise<StaffMembership | Refusal> {
    const version = await this.#store.records.dataVersion(school.id);
    const key = `${school.id}\0${email}`;
    const hit = this.#cache.get(key);
    if (hit && hit.version === version) return hit.result;
    const staff = await this.#store.records.list(school.id, 'staff');
    const match = matchStaffByEmail(staff, email);
    let result: StaffMembership | Refusal;
    if (match.kind === 'found') {
      const teams = await this.#store.records.list(school.id, 'teams');
      result = { school, user: match.user, access: staffAccess(match.user, teams) };
    } else result = match.kind;
    this.#cache.set(key, { version, result });
    return result;
  }
}
