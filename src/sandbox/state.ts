// The live sandbox: the school plus indexes by id, the sandbox clock, and a version bumped by every write
// (list caches key on it).
import type {
  Organisation,
  SAbsence,
  SActivity,
  SCategory,
  School,
  SDepartment,
  SLocation,
  SMembership,
  SSession,
  SStudent,
  STeam,
  SUser,
  SYearGroup,
} from './model.ts';

export class SandboxState {
  readonly school: School;
  version = 0;
  private baseNow: number;
  private baseReal: number;
  private lastStamp = 0;

  readonly activities = new Map<number, SActivity>();
  readonly departments = new Map<number, SDepartment>();
  readonly yearGroups = new Map<number, SYearGroup>();
  readonly locations = new Map<number, SLocation>();
  readonly organisations = new Map<number, Organisation>();
  readonly users = new Map<number, SUser>();
  readonly students = new Map<number, SStudent>();
  readonly studentsBySis = new Map<string, SStudent>();
  readonly teams = new Map<number, STeam>();
  readonly categories = new Map<number, SCategory>();
  readonly sessions = new Map<number, SSession>();
  readonly absences = new Map<number, SAbsence>();
  readonly membershipsByTeam = new Map<number, SMembership[]>();
  readonly membershipsByStudent = new Map<number, SMembership[]>();
  /** Longest session duration: bounds the binary search for sessions intersecting a range. */
  maxSessionDuration = 0;
  private nextIds = new Map<string, number>();

  constructor(school: School, now: number) {
    this.school = school;
    this.baseNow = now;
    this.baseReal = Date.now();
    for (const a of school.activities) this.activities.set(a.id, a);
    for (const d of school.departments) this.departments.set(d.id, d);
    for (const y of school.yearGroups) this.yearGroups.set(y.id, y);
    for (const l of school.locations) this.locations.set(l.id, l);
    for (const o of school.organisations) this.organisations.set(o.id, o);
    for (const u of school.users) this.users.set(u.id, u);
    for (const s of school.students) {
      this.students.set(s.id, s);
      this.studentsBySis.set(s.sisId, s);
    }
    for (const t of school.teams) this.teams.set(t.id, t);
    for (const c of school.categories) this.categories.set(c.id, c);
    for (const s of school.sessions) {
      this.sessions.set(s.id, s);
      this.maxSessionDuration = Math.max(this.maxSessionDuration, s.end - s.start);
    }
    for (const a of school.absences) this.absences.set(a.id, a);
    for (const m of school.memberships) {
      push(this.membershipsByTeam, m.teamId, m);
      push(this.membershipsByStudent, m.studentId, m);
    }
    const maxId = (xs: { id: number }[]) => xs.reduce((m, x) => Math.max(m, x.id), 0);
    this.nextIds.set('session', maxId(school.sessions) + 1);
    this.nextIds.set('series', school.sessions.reduce((m, s) => Math.max(m, s.seriesId), 0) + 1);
    this.nextIds.set('user', maxId(school.users) + 1);
    this.nextIds.set('location', maxId(school.locations) + 1);
    this.nextIds.set('absence', maxId(school.absences) + 1);
  }

  /** The sandbox's current time: `now` plus the real time elapsed since it was set. */
  now(): number {
    return this.baseNow + (Date.now() - this.baseReal);
  }

  setNow(ms: number): void {
    this.baseNow = ms;
    this.baseReal = Date.now();
    this.version++;
  }

  /** A strictly increasing updated-timestamp for a write, on the sandbox clock. */
  stamp(): number {
    const t = Math.max(this.now(), this.lastStamp + 1);
    this.lastStamp = t;
    return t;
  }

  nextId(kind: 'session' | 'series' | 'user' | 'location' | 'absence'): number {
    const id = this.nextIds.get(kind) ?? 1;
    this.nextIds.set(kind, id + 1);
    return id;
  }

  /** Team members (as at `at`) plus students put on the session directly. */
  rosterAt(teamIds: number[], at: number, extra: number[]): number[] {
    const ids = new Set<number>();
    for (const t of teamIds) {
      for (const m of this.membershipsByTeam.get(t) ?? []) {
        if (activeAt(m, at)) ids.add(m.studentId);
      }
    }
    for (const s of extra) ids.add(s);
    return [...ids];
  }

  /** Inserts or re-sorts a session in the chronological list. */
  placeSession(s: SSession): void {
    const list = this.school.sessions;
    const at = list.indexOf(s);
    if (at >= 0) list.splice(at, 1);
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = list[mid]!;
      if (m.start < s.start || (m.start === s.start && m.id < s.id)) lo = mid + 1;
      else hi = mid;
    }
    list.splice(lo, 0, s);
    this.sessions.set(s.id, s);
    this.maxSessionDuration = Math.max(this.maxSessionDuration, s.end - s.start);
  }

  removeSession(id: number): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    const list = this.school.sessions;
    const at = list.indexOf(s);
    if (at >= 0) list.splice(at, 1);
  }

  /** Index of the first session whose start is at or after `ms`. */
  firstSessionFrom(ms: number): number {
    const list = this.school.sessions;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (list[mid]!.start < ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export function activeAt(m: { start: number | null; end: number | null }, at: number): boolean {
  return (m.start === null || m.start <= at) && (m.end === null || m.end > at);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
