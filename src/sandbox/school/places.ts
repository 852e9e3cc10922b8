// The school's fixed frame: organisations (the school and its opponents), departments, year groups, activities,
// categories and locations (home venues, and one association venue per opponent).

import {
  ACTIVITIES,
  type ActivitySpec,
  DEPARTMENTS,
  HOME_VENUES,
  OPPONENT_SCHOOLS,
  venuesFor,
} from '../fixed-facts.ts';
import type { Organisation, SActivity, SCategory, SDepartment, SLocation, SYearGroup } from '../model.ts';
import type { Rng } from '../prng.ts';
import { type Basis, CATEGORIES, pastStamp, YEAR_GROUPS } from './basis.ts';

export interface Frame {
  organisation: Organisation;
  organisations: Organisation[];
  departments: SDepartment[];
  yearGroups: SYearGroup[];
  activities: SActivity[];
  /** The catalogue entry each activity was made from, by activity id. */
  specOf: Map<number, ActivitySpec>;
  liveActivities: SActivity[];
  categories: SCategory[];
}

export interface Venues {
  locations: SLocation[];
  /** Each opponent's playing fields, by organisation id. */
  awayVenue: Map<number, SLocation>;
}

/** Everything but the locations; `actRng` is consumed by the activities alone. */
export function makeFrame(basis: Basis, actRng: Rng): Frame {
  const organisation: Organisation = {
    id: 1,
    name: 'Hillcrest College',
    acronym: 'HC',
    shortName: 'Hillcrest',
    state: 'NSW',
  };
  const organisations: Organisation[] = [organisation];
  for (const [name, acronym, shortName] of OPPONENT_SCHOOLS) {
    organisations.push({ id: organisations.length + 1, name, acronym, shortName, state: 'NSW' });
  }
  const departments = DEPARTMENTS.map((name, i) => ({ id: 11 + i, name }));
  const yearGroups: SYearGroup[] = YEAR_GROUPS.map((name, i) => ({ id: 701 + i, name, archived: false }));
  yearGroups.push({ id: 700, name: 'Year 6 (former prep)', archived: true });
  const specs = ACTIVITIES.slice(0, basis.spec.activities);
  const activities = makeActivities(basis, actRng, specs, departments);
  return {
    organisation,
    organisations,
    departments,
    yearGroups,
    activities,
    specOf: new Map(activities.map((a, i) => [a.id, specs[i] as ActivitySpec])),
    liveActivities: activities.filter((a) => !a.archived),
    categories: CATEGORIES.map(([name], i) => ({ id: 51 + i, name, sortOrder: i + 1 })),
  };
}

/** The first N of the catalogue; the last of a larger set is archived. */
function makeActivities(
  basis: Basis,
  actRng: Rng,
  specs: readonly ActivitySpec[],
  departments: readonly SDepartment[],
): SActivity[] {
  const deptByName = new Map(departments.map((d) => [d.name, d]));
  return specs.map((a, i) => {
    const archived = basis.spec.activities > 4 && i === specs.length - 1;
    return {
      id: 101 + i,
      name: a.name,
      code: `${a.code}-${100 + i}`,
      emoji: a.emoji,
      archived,
      timesheetsEnabled: a.kind === 'sport' || a.kind === 'music',
      hexColor: a.hexColor,
      hexContrastColor: contrastColor(a.hexColor),
      colour: Number.parseInt(a.hexColor.slice(1), 16),
      smsCode: `EXT${a.code}`,
      rollMode: actRng.chance(0.8) ? 'present' : 'absent',
      activityType: a.kind === 'sport' ? 'Sport' : a.kind === 'music' ? 'Music' : 'Co-curricular',
      description: `${a.name} at Hillcrest College.`,
      archivedByUserId: archived ? 201 : null,
      archivedTimestamp: archived ? pastStamp(basis, actRng, 200) : null,
      departmentId: deptByName.get(a.department)!.id,
      moveStudentsWithoutApproval: actRng.chance(0.5),
      kind: a.kind,
    };
  });
}

function contrastColor(hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const r = (n >> 16) & 255;
  const g = (n >> 8) & 255;
  const b = n & 255;
  return 0.299 * r + 0.587 * g + 0.114 * b > 150 ? '#000000' : '#FFFFFF';
}

/** Home venues (listed), one archived, and one association venue per opponent (never listed). */
export function makeVenues(locRng: Rng, organisations: readonly Organisation[]): Venues {
  const school = organisations[0] as Organisation;
  const locations: SLocation[] = [];
  HOME_VENUES.forEach((v, i) => {
    locations.push({
      id: 401 + i,
      name: v.name,
      address: v.address,
      latitude: Math.round((-33.79 + locRng.next() * 0.02) * 1e6) / 1e6,
      longitude: Math.round((151.01 + locRng.next() * 0.02) * 1e6) / 1e6,
      archived: false,
      ownerId: school.id,
      subLocations: v.sub ? v.sub.map((name, j) => ({ id: 4000 + i * 10 + j, name })) : null,
      association: false,
    });
  });
  locations.push({
    id: 401 + HOME_VENUES.length,
    name: 'Old Pavilion (demolished)',
    address: null,
    latitude: null,
    longitude: null,
    archived: true,
    ownerId: school.id,
    subLocations: null,
    association: false,
  });
  const awayVenue = new Map<number, SLocation>();
  for (const org of organisations.slice(1)) {
    const loc: SLocation = {
      id: 501 + awayVenue.size,
      name: `${org.shortName} Playing Fields`,
      address: `${locRng.int(1, 200)} ${locRng.pick(['Church', 'Station', 'Park', 'Ridge', 'Harbour'])} Street, Sydney NSW 2000`,
      latitude: Math.round((-33.95 + locRng.next() * 0.3) * 1e6) / 1e6,
      longitude: Math.round((151.0 + locRng.next() * 0.3) * 1e6) / 1e6,
      archived: false,
      ownerId: org.id,
      subLocations: null,
      association: true,
    };
    locations.push(loc);
    awayVenue.set(org.id, loc);
  }
  return { locations, awayVenue };
}

/** A home venue that suits the activity. */
export function homeFor(locations: readonly SLocation[], activity: ActivitySpec, r: Rng): SLocation {
  const name = r.pick(venuesFor(activity));
  return locations.find((l) => l.name === name)!;
}
