// Hand-built domain records for projection and rendering unit tests.
import { createProjectionContext } from '../../src/calendar/context.ts';
import type { ProjectableSession } from '../../src/calendar/project.ts';
import type { CustomFieldMeta, Session } from '../../src/domain/types.ts';

let nextId = 1000;

export function session(
  over: Partial<Session> = {},
  meta: Partial<ProjectableSession['meta']> = {},
): ProjectableSession {
  const id = over.id ?? nextId++;
  return {
    id,
    title: 'U15 Football',
    notes: '',
    studentParentNotes: '',
    opponent: null,
    bye: false,
    cancelled: false,
    scored: false,
    hexColor: null,
    start: '2026-03-28T15:30:00.000Z',
    end: '2026-03-28T17:00:00.000Z',
    creatorUserId: null,
    seriesId: null,
    organisationScore: null,
    opponentScore: null,
    result: null,
    remindStaff: false,
    status: 'confirmed',
    optional: false,
    roundName: null,
    activity: { id: 1, name: 'Football', department: null, hexColor: '#1E88E5' },
    location: {
      id: 7,
      name: 'Main Field',
      address: '1 School Lane, Townsville',
      latitude: 51.5,
      longitude: -0.12,
      owner: { id: 1, name: 'Riverside School', acronym: 'RS', shortName: 'Riverside' },
    },
    teams: [{ id: 10, name: 'U15 Football', category: null, subcategory: null, customFieldsData: {} }],
    students: [{ id: 501 }, { id: 502 }],
    staff: [{ id: 40, firstName: 'Carla', lastName: 'Coach', sisId: null, externalId: null }],
    customFieldsData: {},
    ...over,
    meta: {
      version: 0,
      updatedAt: '2026-03-01T10:00:00.000Z',
      createdAt: '2026-03-01T10:00:00.000Z',
      deletedAt: null,
      ...meta,
    },
  };
}

export const customFields: CustomFieldMeta[] = [
  {
    key: 'meet',
    label: 'Meet time',
    dataType: 'time',
    showToUserTypes: ['guardian', 'student', 'staff'],
    showAfterField: null,
  },
  {
    key: 'kit',
    label: 'Kit',
    dataType: 'single-select',
    showToUserTypes: ['guardian', 'student', 'staff'],
    showAfterField: 'meet',
  },
  {
    key: 'bus',
    label: 'Bus company',
    dataType: 'short-text',
    showToUserTypes: ['staff', 'admin'],
    showAfterField: 'kit',
  },
  {
    key: 'lead',
    label: 'Lead coach',
    dataType: 'staff',
    showToUserTypes: ['guardian', 'staff'],
    showAfterField: 'bus',
  },
  {
    key: 'captain',
    label: 'Captain',
    dataType: 'student',
    showToUserTypes: ['guardian', 'student', 'staff'],
    showAfterField: 'lead',
  },
];

/** The school's location owners default to [1], the owner loadSchoolInfo infers for the venue above. */
export function ctx(over: { locationOwnerIds?: number[] } = {}) {
  return createProjectionContext({
    school: {
      id: 'riverside',
      name: 'Riverside School',
      timeZone: 'Europe/London',
      locationOwnerIds: [1],
      ...over,
    },
    customFields,
    staff: [
      { id: 40, firstName: 'Carla', lastName: 'Coach' },
      { id: 41, firstName: 'Dev', lastName: 'Assistant' },
    ],
    students: [
      { id: 501, firstName: 'Ana', lastName: 'Lima' },
      { id: 502, firstName: 'Ben', lastName: 'Ode' },
    ],
  });
}
