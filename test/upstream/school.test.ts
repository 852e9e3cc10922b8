// The generated school at `school` scale, read through the client: every resource, every record (attendance: the
// last month), no schema error, no skipped record; maxima paging (teams → 50 a page).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { MalformedRecord, UpstreamClient } from '../../src/upstream/api.ts';
import { SESSIONS_PAGE_LENGTH } from '../../src/upstream/client.ts';
import { all, clientOf, collect, ids, NOW } from './sandbox-helpers.ts';

let sb: Sandbox;
let client: UpstreamClient;
const reported: MalformedRecord[] = [];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 2, scale: 'school', now: NOW });
  client = clientOf(sb, { onMalformed: (m) => reported.push(m) });
});
afterAll(() => sb.close());

describe('the school-scale school', () => {
  it('reads every resource without a schema error', async () => {
    const school = sb.school;
    const starts = school.sessions.map((s) => s.start);
    const year = {
      startDateTime: new Date(Math.min(...starts) - 86_400_000).toISOString(),
      endDateTime: new Date(Math.max(...starts) + 86_400_000).toISOString(),
    };
    const { records: sessions, pages } = await collect(
      client.sessions({
        ...year,
        includeTeams: true,
        includeStaff: true,
        includeCustomFieldsMetadata: true,
        includeRoundName: true,
      }),
    );
    expect(ids(sessions)).toEqual(ids(school.sessions));
    expect(pages.length).toBe(Math.ceil(school.sessions.length / SESSIONS_PAGE_LENGTH));
    expect(pages[0]!.customFieldsMetadata!.length).toBe(school.customFields.length);

    const teams = [
      ...(await all(client.teams({ includeStaff: true, includeStudents: true, includePositions: true }))),
      ...(await all(client.teams({ hidden: true }))),
    ];
    expect(ids(teams)).toEqual(ids(school.teams));
    expect(
      ids([...(await all(client.students())), ...(await all(client.students({ current: false })))]),
    ).toEqual(ids(school.students));
    expect(ids(await all(client.studentTeams()))).toEqual(ids(school.memberships));
    // Attendance at this scale is 20,000+ records the server filters once per page; the last month suffices here
    // (the small-scale contract test reads all of it).
    expect((await all(client.attendanceRecords({ timePeriod: 'last-30-days' }))).length).toBeGreaterThan(300);
    expect(ids(await all(client.users()))).toEqual(ids(school.users));
    expect(ids(await all(client.incidents()))).toEqual(ids(school.incidents));
    expect(
      ids([...(await all(client.locations())), ...(await all(client.locations({ archived: true })))]),
    ).toEqual(ids(school.locations.filter((l) => !l.association)));
    expect(ids(await all(client.departments()))).toEqual(ids(school.departments));
    expect(ids(await all(client.yearGroups()))).toEqual(ids(school.yearGroups));
    expect(ids(await all(client.activities()))).toEqual(ids(school.activities));
    expect(
      ids([
        ...(await all(client.activitySelections())),
        ...(await all(client.activitySelections({ isDeleted: true }))),
      ]),
    ).toEqual(ids(school.activitySelections));
    expect(ids(await all(client.preExplainedAbsences()))).toEqual(ids(school.absences));
    for (const t of school.teams.slice(0, 10)) expect((await client.team(t.id)).id).toBe(t.id);
    for (const s of school.sessions.filter((_, i) => i % 2500 === 0)) {
      expect(
        (
          await client.session(s.id, {
            includeTeams: true,
            includeStaff: true,
            includeCustomFieldsMetadata: true,
          })
        ).session.id,
      ).toBe(s.id);
    }
    expect(reported).toEqual([]);
  });

  it('pages teams at their maximum: 50 a page, whatever larger length is asked', async () => {
    const visible = sb.school.teams.filter((t) => !t.hidden).length;
    expect(visible).toBeGreaterThan(100);
    for (const pageLength of [undefined, 100]) {
      const { pages } = await collect(client.teams(pageLength === undefined ? {} : { pageLength }));
      expect(pages.map((p) => p.records.length)).toEqual(
        Array.from({ length: Math.ceil(visible / 50) }, (_, i) => Math.min(50, visible - i * 50)),
      );
    }
    const { pages: students } = await collect(client.students());
    expect(students[0]!.records.length).toBe(200);
    const { pages: att } = await collect(client.attendanceRecords({ timePeriod: 'last-30-days' }));
    expect(att[0]!.records.length).toBe(300);
    const { pages: memberships } = await collect(client.studentTeams());
    expect(memberships[0]!.records.length).toBe(300);
  });
});
