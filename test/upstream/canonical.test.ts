// The fast path (src/upstream/canonical.ts) must agree with zod: a record it accepts normalises exactly as the
// zod-parsed record does, and every quirk sends a record down the zod path.
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { canonicalCheck } from '../../src/upstream/canonical.ts';
import { ENDPOINTS } from '../../src/upstream/client.ts';
import { normaliseSession, normaliseStudent, normaliseTeam } from '../../src/upstream/normalise.ts';
import { zSession, zStudent, zTeam } from '../../src/upstream/schemas.ts';
import { fixture } from './fixture-server.ts';

const canonicalSession = {
  id: 1,
  title: 'Netball v Hills',
  notes: '',
  studentParentNotes: 'Bring water',
  opponent: 'Hills',
  bye: false,
  cancelled: false,
  scored: true,
  hexColor: '#ff0000',
  startDateTime: '2026-03-14T09:00:00.000Z',
  endDateTime: '2026-03-14T10:00:00.000Z',
  creatorUserId: 3,
  seriesId: null,
  organisationScore: '3',
  opponentScore: '2',
  result: 'W',
  remindStaff: false,
  status: 'confirmed',
  activity: { id: 3, name: 'Netball', department: { id: 1, name: 'Sport' }, colour: 5, hexColor: '#ff0000' },
  feedback: [],
  assignedStaff: [
    { id: 4, firstName: 'A', lastName: 'B', sisId: null, externalId: 'E4', secondaryExternalId: null },
  ],
  locationData: { id: 2, name: 'Court', address: null, latitude: 1.5, longitude: 2.5, owner: null },
  teams: [
    { id: 5, name: 'T', category: null, subcategory: null, customFieldsData: { coach: [4], meet: '07:45' } },
  ],
  students: [{ id: 9, firstName: 'F', lastName: 'L', smsId: 'S9', yearGroup: { id: 1, name: 'Year 7' } }],
};

function agrees<S extends z.ZodType, T>(schema: S, normalise: (r: z.output<S>) => T, raw: unknown): boolean {
  if (!canonicalCheck(schema)(raw)) return false;
  expect(normalise(raw as z.output<S>)).toEqual(normalise(schema.parse(raw)));
  return true;
}

describe('canonical fast path', () => {
  it('accepts a record already in output form, and normalises it as zod would', () => {
    expect(agrees(zSession, (r) => normaliseSession(r, null), canonicalSession)).toBe(true);
    // Scores are kept as received (string or number) on both paths and printed as text.
    const numeric = { ...canonicalSession, organisationScore: 3, opponentScore: '2' };
    expect(agrees(zSession, (r) => normaliseSession(r, null), numeric)).toBe(true);
    expect(normaliseSession(numeric as never, null)).toMatchObject({
      organisationScore: '3',
      opponentScore: '2',
    });
  });

  it.each([
    ['id as string', { id: '1' }],
    ['score as boolean', { opponentScore: true }],
    ['result as word', { result: 'won' }],
    ['status capitalised', { status: 'Draft' }],
    ['instant without milliseconds', { startDateTime: '2026-03-14T09:00:00Z' }],
    ['instant with offset', { endDateTime: '2026-03-14T19:00:00.000+10:00' }],
    ['boolean as yes', { bye: 'yes' }],
    ['coordinate as string', { locationData: { ...canonicalSession.locationData, latitude: '1.5' } }],
    ['nested id as string', { students: [{ ...canonicalSession.students[0], id: '9' }] }],
    ['missing required field', { activity: undefined }],
  ])('sends a record with %s through zod', (_name, change) => {
    expect(canonicalCheck(zSession)({ ...canonicalSession, ...change })).toBe(false);
  });

  it('agrees with zod on every fixture record it accepts', () => {
    const misc = fixture('misc.json') as Record<string, { data: unknown[] }>;
    const cases: [string, z.ZodType, (r: never) => unknown, unknown[]][] = [
      [
        'sessions',
        zSession,
        (r) => normaliseSession(r, null),
        [
          ...(fixture('sessions-page1.json') as { data: unknown[] }).data,
          ...(fixture('sessions-page2.json') as { data: unknown[] }).data,
          (fixture('session-single.json') as { data: unknown }).data,
        ],
      ],
      [
        'teams',
        zTeam,
        normaliseTeam,
        [
          ...(fixture('teams.json') as { data: unknown[] }).data,
          (fixture('team-single.json') as { data: unknown }).data,
        ],
      ],
      ['students', zStudent, (r) => normaliseStudent(r, true), misc.students!.data],
    ];
    for (const [key, ep] of Object.entries(ENDPOINTS)) {
      const m = misc[key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)];
      if (m) {
        const normalise = ep.normalise as (r: never, ctx: { customFields: null }) => unknown;
        cases.push([key, ep.schema, (r) => normalise(r, { customFields: null }), m.data]);
      }
    }
    let accepted = 0;
    for (const [, schema, normalise, records] of cases) {
      for (const raw of records) {
        try {
          if (agrees(schema, (r) => normalise(r as never), raw)) accepted++;
        } catch (err) {
          // A record the normaliser rejects must be rejected on both paths.
          if (!(err instanceof Error) || err.name === 'AssertionError') throw err;
          expect(() => normalise(schema.parse(raw) as never)).toThrow();
        }
      }
    }
    expect(accepted).toBeGreaterThan(3);
  });
});
