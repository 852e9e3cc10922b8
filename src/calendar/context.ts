// What the projection needs besides the session: the school, custom field metadata, name lookups and wording.
// Built once per render batch (all feeds of a school share one), so projecting an event is pure and cheap.
import type { CustomFieldMeta, Id } from '../domain/types.ts';
import type { FeedScope, SchoolId, Store } from '../store/types.ts';
import { type EventTemplates, loadEventTemplates } from './templates.ts';

export interface SchoolInfo {
  id: SchoolId;
  name: string;
  /** IANA zone, e.g. `Europe/London`. */
  timeZone: string;
  /**
   * Location owners that are this school (for home/away). When empty, an owner counts as the school when its
   * name, short name or acronym equals the school's name (case and spacing ignored).
   */
  locationOwnerIds?: Id[];
}

export interface ProjectionContext {
  school: SchoolInfo;
  customFields: ReadonlyMap<string, CustomFieldMeta>;
  staffNames: ReadonlyMap<Id, string>;
  studentNames: ReadonlyMap<Id, string>;
  templates: EventTemplates;
}

/** The feed an event is projected for; it is part of the UID (see uid.ts). */
export interface FeedScopeRef {
  scope: FeedScope;
  id: Id;
}

export function personName(p: { firstName: string; lastName: string }): string {
  return `${p.firstName} ${p.lastName}`.trim();
}

export function createProjectionContext(input: {
  school: SchoolInfo;
  customFields?: Iterable<CustomFieldMeta>;
  staff?: Iterable<{ id: Id; firstName: string; lastName: string }>;
  students?: Iterable<{ id: Id; firstName: string; lastName: string }>;
  templates?: EventTemplates;
}): ProjectionContext {
  return {
    school: input.school,
    customFields: new Map([...(input.customFields ?? [])].map((f) => [f.key, f])),
    staffNames: new Map([...(input.staff ?? [])].map((s) => [s.id, personName(s)])),
    studentNames: new Map([...(input.students ?? [])].map((s) => [s.id, personName(s)])),
    templates: input.templates ?? loadEventTemplates({ schoolId: input.school.id }),
  };
}

/** Reads what the projection needs for one school from the store. */
export async function loadProjectionContext(
  store: Store,
  schoolId: SchoolId,
  opts: { templates?: EventTemplates; locationOwnerIds?: Id[] } = {},
): Promise<ProjectionContext> {
  const school = (await store.listSchools()).find((s) => s.id === schoolId);
  if (!school) throw new Error(`unknown school: ${schoolId}`);
  const [customFields, staff, students] = await Promise.all([
    store.list(schoolId, 'customFields'),
    store.list(schoolId, 'staff'),
    store.list(schoolId, 'students', { includeDeleted: true }),
  ]);
  return createProjectionContext({
    school: { ...school, ...(opts.locationOwnerIds ? { locationOwnerIds: opts.locationOwnerIds } : {}) },
    customFields,
    staff,
    students,
    ...(opts.templates ? { templates: opts.templates } : {}),
  });
}
