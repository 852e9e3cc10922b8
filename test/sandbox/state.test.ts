// The live sandbox's state (src/sandbox/state.ts) over a real generated school: its clock runs from the `now` it was
// given, every write's stamp is strictly later than the one before (what `updatedAfter` cursors rely on), new ids
// never meet the school's, rosters follow memberships as at an instant, and the session list stays chronological
// through writes (the range search depends on it).
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../src/sandbox/generate.ts';
import type { SSession } from '../../src/sandbox/model.ts';
import { activeAt, SandboxState } from '../../src/sandbox/state.ts';
import { DAY } from '../../src/sandbox/time.ts';
import { TEST_NOW } from '../support/clock.ts';

const NOW = Date.parse(TEST_NOW);
const fresh = () => new SandboxState(generateSchool(7, 'small', NOW), NOW);

const chronological = (list: SSession[]) =>
  list.every(
    (s, i) =>
      i === 0 || list[i - 1]!.start < s.start || (list[i - 1]!.start === s.start && list[i - 1]!.id < s.id),
  );

describe('SandboxState', () => {
  it('runs its clock from the now it was given; setNow moves it and bumps the version', () => {
    const st = fresh();
    expect(st.now() - NOW).toBeGreaterThanOrEqual(0);
    expect(st.now() - NOW).toBeLessThan(5_000);
    const v = st.version;
    st.setNow(NOW - 30 * DAY);
    expect(Math.abs(st.now() - (NOW - 30 * DAY))).toBeLessThan(5_000);
    expect(st.version).toBe(v + 1);
  });

  it('stamps every write strictly later than the last, even when the clock is set back', () => {
    const st = fresh();
    const stamps = Array.from({ length: 50 }, () => st.stamp());
    for (let i = 1; i < stamps.length; i++) expect(stamps[i]).toBeGreaterThan(stamps[i - 1]!);
    st.setNow(NOW - 365 * DAY);
    expect(st.stamp()).toBeGreaterThan(stamps.at(-1)!);
  });

  it('hands out ids above every id of the school, each once', () => {
    const st = fresh();
    const maxSession = Math.max(...st.school.sessions.map((s) => s.id));
    const maxUser = Math.max(...st.school.users.map((u) => u.id));
    expect([st.nextId('session'), st.nextId('session')]).toEqual([maxSession + 1, maxSession + 2]);
    expect(st.nextId('user')).toBe(maxUser + 1);
  });

  it('rosters a team as its memberships stand at the instant, plus students put on directly, each once', () => {
    const st = fresh();
    const ended = st.school.memberships.find((m) => m.end !== null)!;
    expect(ended, 'the small school has a membership that ended').toBeDefined();
    const team = ended.teamId;
    const before = st.rosterAt([team], ended.end! - 1, []);
    const at = st.rosterAt([team], ended.end!, []);
    expect(before).toContain(ended.studentId);
    const stillMember = st.school.memberships.some(
      (m) => m.teamId === team && m.studentId === ended.studentId && activeAt(m, ended.end!),
    );
    expect(at.includes(ended.studentId)).toBe(stillMember);
    const extra = before[0]!;
    const withExtra = st.rosterAt([team], ended.end! - 1, [extra, 999_999]);
    expect(withExtra.filter((id) => id === extra)).toHaveLength(1);
    expect(withExtra).toContain(999_999);
    expect(st.rosterAt([], NOW, [])).toEqual([]);
  });

  it('keeps the session list chronological (id breaking ties) when a session is placed, moved or removed', () => {
    const st = fresh();
    const list = st.school.sessions;
    expect(chronological(list)).toBe(true);
    const moved = list[0]!;
    moved.start = list.at(-1)!.start + DAY;
    moved.end = moved.start + 3 * DAY;
    st.placeSession(moved);
    expect(list.at(-1)).toBe(moved);
    expect(list.filter((s) => s === moved)).toHaveLength(1);
    expect(st.maxSessionDuration).toBeGreaterThanOrEqual(3 * DAY);

    const orig = list[5]!;
    const twin: SSession = { ...orig, id: st.nextId('session') };
    st.placeSession(twin);
    expect(list.indexOf(twin)).toBeGreaterThan(list.indexOf(orig));
    expect(chronological(list)).toBe(true);
    expect(st.sessions.get(twin.id)).toBe(twin);

    st.removeSession(twin.id);
    expect(st.sessions.has(twin.id)).toBe(false);
    expect(list.includes(twin)).toBe(false);
    st.removeSession(twin.id);
  });

  it('finds the first session starting at or after an instant', () => {
    const st = fresh();
    const list = st.school.sessions;
    const s = list[Math.floor(list.length / 2)]!;
    const i = st.firstSessionFrom(s.start);
    expect(list[i]!.start).toBe(s.start);
    expect(i === 0 || list[i - 1]!.start < s.start).toBe(true);
    expect(st.firstSessionFrom(s.start + 1)).toBeGreaterThan(i);
    expect(st.firstSessionFrom(Number.MAX_SAFE_INTEGER)).toBe(list.length);
    expect(st.firstSessionFrom(0)).toBe(0);
  });
});

describe('activeAt', () => {
  it('counts a membership from its start (inclusive) to its end (exclusive); null is open', () => {
    expect(activeAt({ start: 10, end: 20 }, 10)).toBe(true);
    expect(activeAt({ start: 10, end: 20 }, 19)).toBe(true);
    expect(activeAt({ start: 10, end: 20 }, 20)).toBe(false);
    expect(activeAt({ start: 10, end: 20 }, 9)).toBe(false);
    expect(activeAt({ start: null, end: null }, 0)).toBe(true);
    expect(activeAt({ start: null, end: 5 }, 5)).toBe(false);
  });
});
