// What a roster reads and checks (src/rosters/data.ts), over a school pulled from the sandbox into a real SQLite
// store: the school asked for or the only one, the session a sheet is for when none is named (the next one not
// cancelled, a fixture for fixture sheets), every refusal with its code and HTTP status, and the absences and
// location address the sheet shows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Team } from '../../src/domain/types.ts';
import {
  absencesOfSessions,
  loadRosterData,
  RosterError,
  resolveSchool,
  upcomingSessions,
} from '../../src/rosters/data.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store, Stored } from '../../src/store/types.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';

const SCHOOL = 'hill';
const DAY = 86_400_000;
let h: Harness;
let now: Date;
let teams: Team[];
let sessions: Stored<'sessions'>[];

beforeAll(async () => {
  h = await startHarness({ scale: 'small' });
  now = new Date(h.sandbox.now());
  teams = (await h.store.records.list(SCHOOL, 'teams')).filter((t) => !t.meta.deletedAt);
  sessions = (await h.store.records.listSessions(SCHOOL, {})).filter((s) => !s.meta.deletedAt);
}, 120_000);
afterAll(() => h?.close());

/** The refusal `p` ends in: its code and HTTP status, and its message. */
async function refusal(p: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RosterError);
  const { code, status, message } = err as RosterError;
  return { code, status, message };
}

const of = (team: Team) => sessions.filter((s) => s.teams.some((t) => t.id === team.id));
const required = { name: 'register', session: 'required' } as const;

describe('the school a roster is for', () => {
  let dir: string;
  let other: Store;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rostercal-roster-data-'));
    other = await openStore({ file: path.join(dir, 'rostercal.sqlite') });
  });
  afterAll(async () => {
    await other?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is the only one in the store, or the one asked for; none, an unknown one or several unnamed are refused', async () => {
    expect((await resolveSchool(h.store)).id).toBe(SCHOOL);
    expect(await refusal(resolveSchool(h.store, 'elm'))).toEqual({
      code: 'unknown-school',
      status: 404,
      message: 'unknown school "elm" (schools in the store: hill)',
    });
    expect(await refusal(resolveSchool(other))).toMatchObject({ code: 'no-school', status: 404 });
    await other.records.upsertSchool({ id: 'elm', name: 'Elm', timeZone: 'Europe/London' });
    await other.records.upsertSchool({ id: 'oak', name: 'Oak', timeZone: 'Europe/London' });
    expect(await refusal(resolveSchool(other))).toMatchObject({
      code: 'ambiguous-school',
      status: 400,
      message: expect.stringContaining('(elm, oak)'),
    });
    expect((await resolveSchool(other, 'oak')).name).toBe('Oak');
  });
});

describe('the session a roster is for', () => {
  it("lists a team's sessions not ended yet in start order, and picks the next not cancelled (a fixture for fixture sheets)", async () => {
    const upcomingOf = (t: Team) =>
      of(t)
        .filter((s) => Date.parse(s.end) > now.getTime() && Date.parse(s.start) < now.getTime() + 365 * DAY)
        .sort((a, b) => a.start.localeCompare(b.start) || a.id - b.id);
    // A team whose next session is not a fixture, with a fixture after it: the two picks differ.
    const team = teams.find((t) => {
      const open = upcomingOf(t).filter((s) => !s.cancelled);
      return open.length > 0 && !open[0]!.scored && open.some((s) => s.scored);
    });
    expect(team, 'no team with a session and then a fixture ahead in the generated school').toBeDefined();
    const expected = upcomingOf(team!);
    const upcoming = await upcomingSessions(h.store, SCHOOL, team!.id, now);
    expect(upcoming.map((s) => s.id)).toEqual(expected.map((s) => s.id));

    const next = expected.find((s) => !s.cancelled)!;
    expect((await loadRosterData(h.store, required, { teamId: team!.id, now })).session?.id).toBe(next.id);
    const fixture = expected.find((s) => !s.cancelled && s.scored)!;
    const data = await loadRosterData(
      h.store,
      { name: 'match', session: 'fixture' },
      { teamId: team!.id, now },
    );
    expect(data.session?.id).toBe(fixture.id);
    // A sheet not for a session reads none.
    const plain = await loadRosterData(h.store, { name: 'list', session: 'none' }, { teamId: team!.id, now });
    expect(plain.session).toBeNull();
    expect(plain.team.id).toBe(team!.id);
  });

  it('refuses an unknown team, another team’s session (naming nothing of it), and a session the template is not for', async () => {
    const [team, otherTeam] = teams.filter((t) => of(t).length > 0);
    const theirs = of(otherTeam!).find((s) => !s.teams.some((t) => t.id === team!.id))!;
    expect(await refusal(loadRosterData(h.store, required, { teamId: 999_999, now }))).toMatchObject({
      code: 'unknown-team',
      status: 404,
    });
    const foreign = await refusal(
      loadRosterData(h.store, required, { teamId: team!.id, sessionId: theirs.id, now }),
    );
    expect(foreign).toEqual({
      code: 'unknown-session',
      status: 404,
      message: `team ${team!.id} has no session ${theirs.id}`,
    });
    const own = of(team!)[0]!;
    expect(
      await refusal(
        loadRosterData(
          h.store,
          { name: 'list', session: 'none' },
          { teamId: team!.id, sessionId: own.id, now },
        ),
      ),
    ).toMatchObject({ code: 'session-not-allowed', status: 400 });
    const friendly = sessions.find((s) => !s.scored)!;
    expect(
      await refusal(
        loadRosterData(
          h.store,
          { name: 'match', session: 'fixture' },
          { teamId: friendly.teams[0]!.id, sessionId: friendly.id, now },
        ),
      ),
    ).toMatchObject({ code: 'not-a-fixture', status: 400 });
  });

  it('refuses a session that ended more than pastDays ago; without pastDays any session the store holds', async () => {
    const past = sessions.find((s) => Date.parse(s.end) < now.getTime() - 2 * DAY)!;
    expect(past).toBeDefined();
    const req = { teamId: past.teams[0]!.id, sessionId: past.id, now };
    // Ended d days ago (d not whole, the generated times being what they are): refused with floor(d), kept with ceil(d).
    const d = (now.getTime() - Date.parse(past.end)) / DAY;
    expect(Number.isInteger(d)).toBe(false);
    expect(
      await refusal(loadRosterData(h.store, required, { ...req, pastDays: Math.floor(d) })),
    ).toMatchObject({
      code: 'session-too-old',
      status: 404,
      message: expect.stringContaining(`more than ${Math.floor(d)} days ago`),
    });
    expect((await loadRosterData(h.store, required, { ...req, pastDays: Math.ceil(d) })).session?.id).toBe(
      past.id,
    );
    expect((await loadRosterData(h.store, required, req)).session?.id).toBe(past.id);
  });

  it("marks the absences of the team's students that overlap the session, per student", async () => {
    const absences = (await h.store.records.list(SCHOOL, 'absences')).filter((a) => !a.meta.deletedAt);
    // A session of a team one of whose students is away during it.
    const hit = sessions
      .flatMap((s) => s.teams.map((t) => ({ s, team: teams.find((x) => x.id === t.id) })))
      .find(
        ({ s, team }) =>
          team &&
          absences.some(
            (a) =>
              team.students.some((m) => m.studentId === a.studentId) &&
              Date.parse(a.start) < Date.parse(s.end) &&
              Date.parse(a.end) > Date.parse(s.start),
          ),
      );
    expect(hit, 'no session with an absent student in the generated school').toBeDefined();
    const { s, team } = hit!;
    const data = await loadRosterData(h.store, required, { teamId: team!.id, sessionId: s.id, now });
    const away = absences.filter(
      (a) =>
        team!.students.some((m) => m.studentId === a.studentId) &&
        Date.parse(a.start) < Date.parse(s.end) &&
        Date.parse(a.end) > Date.parse(s.start),
    );
    expect([...data.absences.keys()].sort()).toEqual([...new Set(away.map((a) => a.studentId))].sort());
    for (const [student, list] of data.absences)
      expect(list.map((a) => a.id).sort()).toEqual(
        away
          .filter((a) => a.studentId === student)
          .map((a) => a.id)
          .sort(),
      );
    // The same marks from the one read for several sessions; none asked, none read.
    const many = await absencesOfSessions(
      h.store,
      SCHOOL,
      team!.students.map((m) => m.studentId),
      [s, ...of(team!)],
    );
    expect(many.get(s.id)).toEqual(data.absences);
    expect((await absencesOfSessions(h.store, SCHOOL, [], [s])).get(s.id)?.size).toBe(0);
  });

  it('reads the address of a location the session names without one', async () => {
    // Upstream may send a session's location by reference only: the sheet reads its address from the location.
    const s = sessions.find((x) => x.location?.address && x.location.id !== null)!;
    const location = (await h.store.records.list(SCHOOL, 'locations')).find((l) => l.id === s.location!.id);
    expect(location?.address).toBeTruthy();
    const req = { teamId: s.teams[0]!.id, sessionId: s.id, now };
    expect((await loadRosterData(h.store, required, req)).locationAddress).toBeNull();
    const { meta: _meta, ...record } = s;
    await h.store.records.upsert(
      SCHOOL,
      'sessions',
      [{ ...record, location: { ...record.location!, address: null } }],
      now.toISOString(),
    );
    expect((await loadRosterData(h.store, required, req)).locationAddress).toBe(location!.address);
  });
});
