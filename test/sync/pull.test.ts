// The pull against the sandbox over HTTP, into real SQLite and PostgreSQL stores: first sync, unchanged rerun,
// upstream changes seen by the right kind of run, and the deletion guard.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import type { Session, Team } from '../../src/domain/types.ts';
import { syncWindow } from '../../src/jobs/window.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { Store } from '../../src/store/types.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { TEST_NOW } from '../support/clock.ts';
import {
  DIALECTS,
  listAll,
  openTestStore,
  resetSandboxStats,
  sandboxStats,
  type TestStore,
  testClient,
  testSchool,
} from './helpers.ts';

// The pulls run on the sandbox's clock, pinned to TEST_NOW: windows, cursors and the school agree on the date.
const clockOf = (sb: Sandbox) => () => new Date(sb.now());
const strip = <T extends { meta?: unknown }>({ meta: _m, ...rest }: T) => rest;
const byId = <T extends { id: number }>(xs: T[]) => [...xs].sort((a, b) => a.id - b.id);

describe.each(DIALECTS)('pull into %s', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let store: Store;
  let client: UpstreamClient;
  let school: SchoolConfig;
  let staffEmail: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    store = ts.store;
    client = testClient(sandbox);
    school = testSchool(sandbox);
    staffEmail = sandbox.school.users.find((u) => u.email)!.email;
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('first sync is full and equals the sandbox’s data', async () => {
    await resetSandboxStats(sandbox.url);
    const summary = await pullSchool({ now: clockOf(sandbox), store, client, school, kind: 'incremental' });
    expect(summary.requestedKind).toBe('incremental');
    expect(summary.kind).toBe('full');
    expect(summary.status).toBe('succeeded');
    expect(summary.errors).toEqual([]);
    expect(summary.upstream.requests).toBe((await sandboxStats(sandbox.url)).total);

    // Ground truth from the sandbox's own school.
    const window = syncWindow(new Date(summary.startedAt), school.syncWindow);
    const from = Date.parse(window.from);
    const to = Date.parse(window.to);
    const inWindow = sandbox.school.sessions.filter((s) => s.start < to && s.end > from);
    const stored = await store.records.list(school.id, 'sessions');
    expect(stored.length).toBe(inWindow.length);
    expect(summary.counts.sessions).toMatchObject({
      added: inWindow.length,
      changed: 0,
      deleted: 0,
      skipped: 0,
    });
    for (const s of inWindow.filter((_, i) => i % 17 === 0)) {
      const got = await store.records.get(school.id, 'sessions', s.id);
      expect(got, `session ${s.id}`).not.toBeNull();
      expect(got!.title).toBe(s.title);
      expect(got!.cancelled).toBe(s.cancelled);
      expect(got!.start).toBe(new Date(s.start).toISOString());
      expect(got!.end).toBe(new Date(s.end).toISOString());
      expect(got!.activity.id).toBe(s.activityId);
      expect(got!.teams.map((t) => t.id).sort()).toEqual([...s.teamIds].sort());
      expect(got!.staff.map((x) => x.id).sort()).toEqual([...s.staffIds].sort());
      expect(got!.notes).toBe(s.notes);
    }

    const teams = await store.records.list(school.id, 'teams');
    expect(teams.length).toBe(sandbox.school.teams.length);
    expect(teams.filter((t) => t.hidden).length).toBe(sandbox.school.teams.filter((t) => t.hidden).length);
    expect(teams.some((t) => t.hidden)).toBe(true);
    const nowMs = Date.parse(sandbox.now());
    for (const t of sandbox.school.teams) {
      const got = (await store.records.get(school.id, 'teams', t.id))!;
      expect(got.name).toBe(t.name);
      expect(got.hidden).toBe(t.hidden);
      const members = sandbox.school.memberships
        .filter(
          (m) =>
            m.teamId === t.id && (m.start === null || m.start <= nowMs) && (m.end === null || m.end > nowMs),
        )
        .map((m) => m.studentId)
        .sort((a, b) => a - b);
      expect(got.students.map((s) => s.studentId).sort((a, b) => a - b)).toEqual(members);
    }
    // Sensitive rosters are off by default: no single-team reads, no medical or guardian data kept.
    expect((await sandboxStats(sandbox.url)).routes['GET /teams/{id}']?.total ?? 0).toBe(0);
    for (const m of teams.flatMap((t) => t.students)) {
      expect(m.medicalConditions).toEqual([]);
      expect(m.guardians).toEqual([]);
    }
    expect(sandbox.school.students.some((s) => s.medicalConditions.length > 0)).toBe(true);

    const students = await store.records.list(school.id, 'students');
    expect(students.length).toBe(sandbox.school.students.length);
    for (const s of sandbox.school.students) {
      const got = students.find((x) => x.id === s.id)!;
      expect(got.current, `student ${s.id}`).toBe(s.current);
      expect(got.lastName).toBe(s.lastName);
    }
    expect(students.some((s) => !s.current)).toBe(true);
    expect((await store.records.list(school.id, 'staff')).length).toBe(sandbox.school.users.length);
    expect((await store.records.list(school.id, 'activities')).length).toBe(sandbox.school.activities.length);
    expect((await store.records.list(school.id, 'yearGroups')).length).toBe(sandbox.school.yearGroups.length);
    expect((await store.records.list(school.id, 'departments')).length).toBe(
      sandbox.school.departments.length,
    );
    expect((await store.records.list(school.id, 'customFields')).map((c) => c.key).sort()).toEqual(
      sandbox.school.customFields.map((c) => c.key).sort(),
    );
    expect((await store.records.list(school.id, 'studentTeams')).length).toBe(
      sandbox.school.memberships.length,
    );
    const absences = sandbox.school.absences.filter((a) => a.start < to && a.end > from);
    expect((await store.records.list(school.id, 'absences')).length).toBe(absences.length);

    // Field by field against what the client reads now.
    const listed = await listAll(
      client.sessions({
        startDateTime: window.from,
        endDateTime: window.to,
        includeTeams: true,
        includeStaff: true,
        includeRoundName: true,
        includeCustomFieldsMetadata: true,
      }),
    );
    expect(byId(stored.map(strip) as Session[])).toEqual(byId(listed));
    const locations = [
      ...(await listAll(client.locations({ archived: false }))),
      ...(await listAll(client.locations({ archived: true }))),
    ];
    expect(byId((await store.records.list(school.id, 'locations')).map(strip))).toEqual(byId(locations));
    const team = sandbox.school.teams.find((t) => !t.hidden)!;
    const listedTeam = (
      await listAll(client.teams({ includeStudents: true, includeStaff: true, includePositions: true }))
    ).find((t) => t.id === team.id)!;
    expect(strip((await store.records.get(school.id, 'teams', team.id))!)).toEqual({
      ...listedTeam,
      hidden: team.hidden,
    } satisfies Team);

    // The run record.
    const [run] = await store.runs.listRuns(school.id, { limit: 1 });
    expect(run).toMatchObject({
      id: summary.runId,
      kind: 'full',
      status: 'succeeded',
      warning: null,
      errors: [],
    });
    expect(run!.upstreamRequests).toBe(summary.upstream.requests);
    expect(run!.counts.sessions!.added).toBe(inWindow.length);
    expect(run!.finishedAt).not.toBeNull();
  });

  it('an unchanged rerun asks once per incremental listing and changes nothing', async () => {
    const version = await store.records.dataVersion(school.id);
    await resetSandboxStats(sandbox.url);
    const summary = await pullSchool({ now: clockOf(sandbox), store, client, school, kind: 'incremental' });
    expect(summary.kind).toBe('incremental');
    expect(summary.status).toBe('succeeded');
    const stats = await sandboxStats(sandbox.url);
    // sessions, teams (visible), teams (hidden), pre-explained absences: reference data is not due yet.
    expect(stats.total).toBe(4);
    expect(stats.routes['GET /sessions']?.total).toBe(1);
    expect(stats.routes['GET /teams']?.total).toBe(2);
    expect(stats.routes['GET /pre-explained-absences']?.total).toBe(1);
    expect(summary.upstream.requests).toBe(4);
    for (const c of Object.values(summary.counts))
      expect(c).toMatchObject({ added: 0, changed: 0, deleted: 0 });
    expect(
      summary.resources
        .filter((r) => r.mode === 'skipped')
        .map((r) => r.kind)
        .sort(),
    ).toEqual(
      ['activities', 'departments', 'locations', 'staff', 'studentTeams', 'students', 'yearGroups'].sort(),
    );
    expect(await store.records.dataVersion(school.id)).toBe(version);
  });

  it('shows upstream changes after the next run of the right kind', async () => {
    const startedAt = Date.parse(sandbox.now());
    const future = sandbox.school.sessions.filter((s) => s.start > startedAt + 86_400_000 && !s.cancelled);
    const [renamed, cancelled, deleted] = [future[0]!, future[1]!, future[2]!];
    await client.updateSessions({
      email: staffEmail,
      sessions: [
        { id: renamed.id, title: 'Renamed by the test' },
        { id: cancelled.id, cancelled: true },
      ],
    });
    const student = sandbox.school.students.find((s) => s.current)!;
    const [absence] = await client.createAbsences([
      {
        studentId: student.id,
        startDate: new Date(startedAt + 2 * 86_400_000).toISOString(),
        endDate: new Date(startedAt + 3 * 86_400_000).toISOString(),
        explained: true,
        reason: 'Orthodontist',
      },
    ]);
    await client.deleteSessions({ email: staffEmail, sessionIds: [deleted.id] });
    // The API has no way to take a student out of a team: end a membership in the sandbox's live state.
    const membership = sandbox.school.memberships.find(
      (m) => m.end === null && !sandbox.school.teams.find((t) => t.id === m.teamId)!.hidden,
    )!;
    membership.end = Date.parse(sandbox.now()) - 1000;
    sandbox.setNow(sandbox.now()); // bumps the sandbox's state version: no cached listing outlives the edit

    // Incremental: edits and new records, not deletions.
    const inc = await pullSchool({ now: clockOf(sandbox), store, client, school, kind: 'incremental' });
    expect(inc.status).toBe('succeeded');
    expect(inc.counts.sessions).toMatchObject({ changed: 2, deleted: 0, added: 0 });
    expect(inc.counts.absences).toMatchObject({ added: 1, deleted: 0 });
    const got = (await store.records.get(school.id, 'sessions', renamed.id))!;
    expect(got.title).toBe('Renamed by the test');
    expect(got.meta.version).toBe(1);
    expect((await store.records.get(school.id, 'sessions', cancelled.id))!.cancelled).toBe(true);
    expect((await store.records.get(school.id, 'absences', absence!.id))!.reason).toBe('Orthodontist');
    expect(await store.records.get(school.id, 'sessions', deleted.id)).not.toBeNull();

    // Full: the deletion and the membership change.
    const full = await pullSchool({ now: clockOf(sandbox), store, client, school, kind: 'full' });
    expect(full.status).toBe('succeeded');
    expect(full.counts.sessions).toMatchObject({ deleted: 1, changed: 0 });
    expect(await store.records.get(school.id, 'sessions', deleted.id)).toBeNull();
    const tomb = await store.records.get(school.id, 'sessions', deleted.id, { includeDeleted: true });
    expect(tomb?.meta.deletedAt).toBeTruthy();
    const team = (await store.records.get(school.id, 'teams', membership.teamId))!;
    expect(team.students.map((s) => s.studentId)).not.toContain(membership.studentId);
    expect(full.counts.teams!.changed).toBeGreaterThanOrEqual(1);
    const link = (await store.records.get(school.id, 'studentTeams', membership.id))!;
    expect(link.end).toBe(new Date(membership.end).toISOString());
  });

  it('the deletion guard holds against a shrunken or empty listing', async () => {
    const liveBefore = (await store.records.list(school.id, 'sessions')).length;
    const window = syncWindow(new Date(sandbox.now()), school.syncWindow);
    const ids = sandbox.school.sessions
      .filter((s) => s.start < Date.parse(window.to) && s.end > Date.parse(window.from))
      .map((s) => s.id);
    const gone = ids.slice(0, Math.ceil(ids.length * 0.6));
    await client.deleteSessions({ email: staffEmail, sessionIds: gone });
    const absenceIds = sandbox.school.absences.map((a) => a.id);
    await client.deleteAbsences(absenceIds);
    const absencesBefore = (await store.records.list(school.id, 'absences')).length;
    expect(absencesBefore).toBeGreaterThan(0);

    const summary = await pullSchool({ now: clockOf(sandbox), store, client, school, kind: 'full' });
    expect(summary.status).toBe('suspicious');
    expect(summary.warning).toMatch(/sessions: the full listing would delete \d+ of \d+ stored/);
    expect(summary.warning).toMatch(/absences: the full listing came back empty/);
    expect(summary.counts.sessions!.deleted).toBe(0);
    expect(summary.counts.absences!.deleted).toBe(0);
    expect((await store.records.list(school.id, 'sessions')).length).toBe(liveBefore);
    expect((await store.records.list(school.id, 'absences')).length).toBe(absencesBefore);
    const [run] = await store.runs.listRuns(school.id, { limit: 1 });
    expect(run).toMatchObject({ status: 'suspicious', warning: summary.warning });
    expect(summary.resources.find((r) => r.kind === 'sessions')!.status).toBe('guarded');

    // A school that really did shrink that much is released by raising the fraction for a run.
    const relaxed = { ...school, deletionGuard: { maxShrinkFraction: 1 } };
    const released = await pullSchool({
      now: clockOf(sandbox),
      store,
      client,
      school: relaxed,
      kind: 'full',
    });
    expect(released.counts.sessions!.deleted).toBe(gone.length);
    // Empty stays refused whatever the fraction.
    expect(released.status).toBe('suspicious');
    expect(released.warning).toMatch(/absences: the full listing came back empty/);
  });
});

describe.each(DIALECTS)('sensitive rosters into %s', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  const sensitiveData = async (store: Store, schoolId: string, includeDeleted = false) =>
    (await store.records.list(schoolId, 'teams', { includeDeleted }))
      .flatMap((t) => t.students)
      .filter(
        (m) => m.medicalConditions.length > 0 || m.guardians.length > 0 || m.absentReason !== undefined,
      );

  it('reads medical and guardian data only while turned on, and deletes it when turned off', async () => {
    const { store } = ts;
    const client = testClient(sandbox);
    const on = testSchool(sandbox, { rosters: { sensitive: true } });
    const off = testSchool(sandbox);

    await resetSandboxStats(sandbox.url);
    const first = await pullSchool({ now: clockOf(sandbox), store, client, school: on, kind: 'full' });
    expect(first.status).toBe('succeeded');
    const teamCount = sandbox.school.teams.length;
    expect((await sandboxStats(sandbox.url)).routes['GET /teams/{id}']?.total).toBe(teamCount);
    // A team member with conditions: the store keeps them all (the test holds whichever student it finds).
    const members = (await store.records.list(on.id, 'teams')).flatMap((t) => t.students);
    const withMedical = sandbox.school.students.find(
      (s) => s.current && s.medicalConditions.length > 0 && members.some((m) => m.studentId === s.id),
    );
    expect(withMedical, 'a current team member with medical conditions').toBeDefined();
    const member = members.find((m) => m.studentId === withMedical!.id)!;
    expect(member.medicalConditions.length).toBe(withMedical!.medicalConditions.length);
    expect((await sensitiveData(store, on.id)).length).toBeGreaterThan(0);

    // A team deleted upstream since keeps its last record here (a tombstone): it must be stripped too.
    const tombstone = (await store.records.list(on.id, 'teams')).find((t) => t.students.length > 0)!;
    await store.records.markDeleted(on.id, 'teams', [tombstone.id], new Date().toISOString());

    // Turned off: the next run (even an incremental one) rereads the teams listing and keeps none of it.
    await resetSandboxStats(sandbox.url);
    const stripped = await pullSchool({
      now: clockOf(sandbox),
      store,
      client,
      school: off,
      kind: 'incremental',
    });
    expect(stripped.status).toBe('succeeded');
    expect(stripped.resources.find((r) => r.kind === 'teams')!.mode).toBe('full');
    expect((await sandboxStats(sandbox.url)).routes['GET /teams/{id}']?.total ?? 0).toBe(0);
    expect(await sensitiveData(store, off.id, true)).toEqual([]);
    expect(
      (await store.records.get(off.id, 'teams', tombstone.id, { includeDeleted: true }))!.students.length,
    ).toBe(tombstone.students.length);

    // Off and unchanged: a later run reads no team singly and rewrites nothing.
    await resetSandboxStats(sandbox.url);
    const again = await pullSchool({ now: clockOf(sandbox), store, client, school: off, kind: 'full' });
    expect(again.counts.teams).toMatchObject({ added: 0, changed: 0 });
    expect((await sandboxStats(sandbox.url)).routes['GET /teams/{id}']?.total ?? 0).toBe(0);

    // On again: read back.
    await pullSchool({ now: clockOf(sandbox), store, client, school: on, kind: 'incremental' });
    expect((await sensitiveData(store, on.id)).length).toBeGreaterThan(0);
  });

  it('turned off, strips even the stored teams the listing served malformed (kept, not rewritten by it)', async () => {
    const { store } = ts;
    const on = testSchool(sandbox, { id: 'malformed-teams', rosters: { sensitive: true } });
    expect(
      (
        await pullSchool({
          now: clockOf(sandbox),
          store,
          client: testClient(sandbox),
          school: on,
          kind: 'full',
        })
      ).status,
    ).toBe('succeeded');
    expect((await sensitiveData(store, on.id)).length).toBeGreaterThan(0);

    // The same school, some of whose team records now arrive malformed: skipped, so their stored records stay.
    const broken = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW, malformedRate: 0.3 });
    try {
      const off = testSchool(broken, { id: on.id });
      const run = await pullSchool({
        now: clockOf(broken),
        store,
        client: testClient(broken),
        school: off,
        kind: 'full',
      });
      const teams = run.resources.find((r) => r.kind === 'teams')!;
      expect(teams.counts.skipped).toBeGreaterThan(0);
      const kept = sandbox.school.teams.filter((t) => broken.isMalformed('teams', t.id)).map((t) => t.id);
      expect(kept.length).toBeGreaterThan(0);
      for (const id of kept)
        expect(await store.records.get(on.id, 'teams', id, { includeDeleted: true })).not.toBeNull();
      expect(await sensitiveData(store, on.id, true)).toEqual([]);
    } finally {
      await broken.close();
    }
  });
});
