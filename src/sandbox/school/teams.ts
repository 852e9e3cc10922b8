// Teams: each with its name, staff, positions and season, and its memberships drawn from eligible students.

import type { ActivitySpec } from '../fixed-facts.ts';
import type {
  SActivity,
  SCategory,
  SMembership,
  SPosition,
  SStaffAssignment,
  SStudent,
  STeam,
  SUser,
  SYearGroup,
} from '../model.ts';
import { givenNameGender } from '../name-pools.ts';
import type { Rng } from '../prng.ts';
import { DAY } from '../time.ts';
import { type Basis, CATEGORIES, groupBy, pastStamp, SUBCATEGORIES } from './basis.ts';
import type { Frame } from './places.ts';

/** The weeks of the year (0-51, from `Basis.yearStart`) a team plays. */
export interface TeamSeason {
  firstWeek: number;
  lastWeek: number;
}

export interface Squads {
  teams: STeam[];
  memberships: SMembership[];
  teamSeason: Map<number, TeamSeason>;
}

/** What a team's members are drawn from. */
interface Eligible {
  sub: (typeof SUBCATEGORIES)[number];
  fromYear: number;
  toYear: number;
}

/** Adds to each staff user the activities (and, for managers, departments) of the teams they coach. */
export function makeTeams(
  basis: Basis,
  teamRng: Rng,
  frame: Frame,
  users: SUser[],
  students: readonly SStudent[],
): Squads {
  const byYear = groupBy(students, (s) => s.yearGroupId);
  const squads: Squads = { teams: [], memberships: [], teamSeason: new Map() };
  const nameCount = new Map<string, number>();
  const positionIds = { next: 8001 };
  for (let i = 0; i < basis.spec.teams; i++) {
    const activity = frame.liveActivities[i % frame.liveActivities.length] as SActivity;
    const aspec = frame.specOf.get(activity.id)!;
    const sport = aspec.kind === 'sport';
    const catIndex = sport ? teamRng.int(0, 3) : teamRng.chance(0.5) ? 3 : teamRng.int(0, 2);
    const [catName, fromYear, toYear] = CATEGORIES[catIndex]!;
    const sub = sport ? teamRng.pick(SUBCATEGORIES) : 'Mixed';
    const id = 3001 + i;
    const name = teamName(basis, nameCount, activity, catName, sport, sub);
    const positions = (aspec.positions ?? []).map(([pname, slots]) => ({
      id: positionIds.next++,
      name: pname,
      numberOfSlots: slots,
    }));
    const staff = teamStaff(basis, teamRng, users, activity);
    // Sports play one 20-week season; everything else runs all year.
    // Staggered by index so even the small school has one season straddling `now` (week 24).
    const firstWeek = sport ? ([10, 20, 0, 26, 14][i % 5] as number) : 0;
    const lastWeek = sport ? firstWeek + 19 : 51;
    squads.teamSeason.set(id, { firstWeek, lastWeek });
    squads.teams.push({
      id,
      name,
      sisId: `${activity.code}-${catName.slice(0, 3).toUpperCase()}-${id}`,
      // The last team is always hidden, so every scale has one.
      hidden: i === basis.spec.teams - 1 || teamRng.chance(0.04),
      playersRanked: sport && teamRng.chance(0.3),
      categoryId: teamRng.chance(0.92) ? (frame.categories[catIndex] as SCategory).id : null,
      subcategory: sport ? { id: 61 + SUBCATEGORIES.indexOf(sub), name: sub } : null,
      activityId: activity.id,
      staff,
      positions,
      studentSortType: teamRng.pick(['alphabetical', 'jerseyNumber', 'custom', 'yearGroup']),
      updatedAt: pastStamp(basis, teamRng, 120),
    });
    const pool = eligiblePool(frame.yearGroups, byYear, { sub, fromYear, toYear });
    const seasonStart = basis.yearStart + firstWeek * 7 * DAY;
    const team = { id, index: i, sport, kind: aspec.kind, positions, seasonStart };
    addMembers(basis, teamRng, squads.memberships, team, pool, students);
  }
  return squads;
}

/** "Senior Girls Netball", lettered B, C… when the name repeats (A too, except at the smallest scales). */
function teamName(
  basis: Basis,
  nameCount: Map<string, number>,
  activity: SActivity,
  catName: string,
  sport: boolean,
  sub: string,
): string {
  const base = sport
    ? `${catName} ${sub === 'Mixed' ? '' : `${sub} `}${activity.name}`
    : `${catName} ${activity.name}`;
  const seq = (nameCount.get(base) ?? 0) + 1;
  nameCount.set(base, seq);
  const letter =
    String.fromCharCode(64 + (((seq - 1) % 26) + 1)) + (seq > 26 ? String(Math.ceil(seq / 26)) : '');
  return basis.spec.teams <= 8 ? `${base} ${letter === 'A' ? '' : letter}`.trim() : `${base} ${letter}`;
}

/** One to three active coaches, sometimes a former one; each coach is given the activity. */
function teamStaff(basis: Basis, teamRng: Rng, users: SUser[], activity: SActivity): SStaffAssignment[] {
  const activeStaff = users.filter((u) => !u.frozen);
  const staffCount = teamRng.int(1, 3);
  const staff = teamRng.sample(activeStaff, staffCount).map((u) => ({
    userId: u.id,
    start: null as number | null,
    end: null as number | null,
  }));
  // One former coach whose assignment ended, for showAsOfDate.
  if (teamRng.chance(0.15)) {
    const former = teamRng.pick(users);
    if (!staff.some((s) => s.userId === former.id)) {
      staff.push({ userId: former.id, start: basis.yearStart, end: basis.nowMs - teamRng.int(10, 60) * DAY });
    }
  }
  for (const s of staff) {
    const u = users.find((x) => x.id === s.userId)!;
    if (!u.activityIds.includes(activity.id)) u.activityIds.push(activity.id);
    if (u.isManager && !u.departmentIds.includes(activity.departmentId))
      u.departmentIds.push(activity.departmentId);
  }
  return staff;
}

/** Students of the team's year groups; a single-sex team lists no one recorded as, or named as, the other sex. */
function eligiblePool(
  yearGroups: readonly SYearGroup[],
  byYear: Map<number, SStudent[]>,
  e: Eligible,
): SStudent[] {
  const pool: SStudent[] = [];
  for (let y = e.fromYear; y <= e.toYear; y++) {
    for (const s of byYear.get((yearGroups[y] as SYearGroup).id) ?? []) {
      const named = givenNameGender(s.firstName);
      if (e.sub === 'Boys' && (s.gender === 'Female' || named === 'female')) continue;
      if (e.sub === 'Girls' && (s.gender === 'Male' || named === 'male')) continue;
      pool.push(s);
    }
  }
  return pool;
}

/** The team being made, as its members need it. */
interface NewTeam {
  id: number;
  /** Its place among the teams (the late joiner's jersey number). */
  index: number;
  sport: boolean;
  kind: ActivitySpec['kind'];
  positions: SPosition[];
  seasonStart: number;
}

/** Members from the pool (some already left, some with no start), and sometimes a late joiner. */
function addMembers(
  basis: Basis,
  teamRng: Rng,
  memberships: SMembership[],
  team: NewTeam,
  pool: SStudent[],
  students: readonly SStudent[],
): void {
  const { nowMs } = basis;
  const { sport, positions, seasonStart } = team;
  const size = sport ? teamRng.int(12, 20) : team.kind === 'music' ? teamRng.int(15, 32) : teamRng.int(8, 24);
  const chosen = teamRng.sample(pool, size);
  const jerseys = teamRng.sample(
    Array.from({ length: 40 }, (_, k) => k + 1),
    chosen.length,
  );
  const captains = sport ? teamRng.int(1, 2) : 0;
  chosen.forEach((s, k) => {
    let start: number | null = seasonStart - teamRng.int(1, 20) * DAY;
    let end: number | null = null;
    if (teamRng.chance(0.08)) start = null; // older records carry no start
    if (!s.current) end = Math.min(nowMs - DAY, seasonStart + teamRng.int(5, 60) * DAY);
    else if (teamRng.chance(0.07)) end = nowMs - teamRng.int(3, 50) * DAY;
    if (end !== null && start !== null && end <= start) end = start + 7 * DAY;
    const pos = positions.length > 0 && teamRng.chance(0.85) ? teamRng.pick(positions).id : null;
    memberships.push({
      id: 60001 + memberships.length,
      studentId: s.id,
      teamId: team.id,
      start,
      end,
      captain: k < captains && end === null,
      jerseyNumber: sport ? String(jerseys[k]) : '',
      positionId: pos,
      sortOrder: k + 1,
    });
  });
  // A late joiner, so showAsOfDate before today shows a different roster.
  const late = teamRng.pick(pool.length > 0 ? pool : students);
  if (!chosen.includes(late) && late.current) {
    memberships.push({
      id: 60001 + memberships.length,
      studentId: late.id,
      teamId: team.id,
      start: nowMs - teamRng.int(2, 20) * DAY,
      end: null,
      captain: false,
      jerseyNumber: sport ? String(41 + (team.index % 50)) : '',
      positionId: null,
      sortOrder: chosen.length + 1,
    });
  }
}
