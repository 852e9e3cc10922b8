// The sandbox's chaos knobs against the client: 429 bursts and 5xx survived on the 1-2-4-8 schedule (waits are
// injected: recorded at their scheduled length, slept at 1/40 of it so the tests stay fast), request counts that
// match the server's, and malformed records reported and skipped while the rest is kept.
// Waits are recorded at their scheduled length and slept at a fraction of it, so the tests take well under a
// second of waiting while the sandbox's token bucket still refills in real time.
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/index.ts';
import type { MalformedRecord, Page, RetryInfo, UpstreamClient } from '../../src/upstream/api.ts';
import { ServerError } from '../../src/upstream/errors.ts';
import { all, clientOf, collect, ids, NOW } from './sandbox-helpers.ts';

const scheduled = (retry: number) => Math.min(32_000, 1000 * 2 ** (retry - 1));

function recordingClient(sb: { url: string; token: string }, scale: number, extra = {}) {
  const retries: RetryInfo[] = [];
  const client = clientOf(sb, {
    backoff: { maxRetries: 9 },
    onRetry: (r) => retries.push(r),
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms * scale)),
    ...extra,
  });
  return { client, retries };
}

describe('backoff against the sandbox', () => {
  it('a 429 burst is waited out 1, 2, 4, 8 … s, and the counts show it', async () => {
    // The bucket's clock stands still until the fourth retry, then one second passes: exactly four 429s, whatever
    // the machine's load (on the real clock a slow machine refilled the bucket after fewer doublings).
    let clock = 0;
    const sb = await startSandbox({
      port: 0,
      seed: 5,
      scale: 'small',
      now: NOW,
      rateLimit: 1,
      burst: 1,
      rateClock: () => clock,
    });
    try {
      const { client, retries } = recordingClient(sb, 1 / 100, {
        onRetry: (r: RetryInfo) => {
          retries.push(r);
          if (retries.length === 4) clock += 1000;
        },
      });
      const first = await all(client.departments());
      const second = await all(client.departments());
      expect(second).toEqual(first);
      const waits = retries.map((r) => r.waitMs);
      expect(waits).toEqual([1000, 2000, 4000, 8000]);
      expect(waits).toEqual(waits.map((_, i) => scheduled(i + 1)));
      expect(retries.every((r) => r.status === 429)).toBe(true);
      const server = sb.stats().routes['GET /departments']!;
      const mine = client.stats()['GET /departments']!;
      expect(mine.requests).toBe(server.total);
      expect(mine.throttled).toBe(server.byStatus['429']);
      expect(mine).toEqual({
        requests: 2 + waits.length,
        retries: waits.length,
        throttled: waits.length,
        errors: 0,
      });
    } finally {
      await sb.close();
    }
  });

  it('parallel requests past the burst all succeed, each on the schedule', async () => {
    const sb = await startSandbox({ port: 0, seed: 5, scale: 'small', now: NOW, rateLimit: 2, burst: 3 });
    try {
      const { client, retries } = recordingClient(sb, 1 / 40, {
        rateLimit: { requestsPerSecond: 1000, concurrency: 8 },
      });
      const results = await Promise.all(Array.from({ length: 8 }, () => all(client.yearGroups())));
      expect(results.every((r) => r.length === sb.school.yearGroups.length)).toBe(true);
      expect(retries.length).toBeGreaterThan(0);
      expect(retries.every((r) => r.waitMs === scheduled(r.retry))).toBe(true);
      const server = sb.stats();
      expect(client.totals()).toEqual({
        requests: server.total,
        retries: retries.length,
        throttled: server.routes['GET /year-groups']!.byStatus['429'],
        errors: 0,
      });
    } finally {
      await sb.close();
    }
  });

  it('5xx on reads are retried on the schedule until the data is complete; a 5xx on a write is not', async () => {
    const sb = await startSandbox({ port: 0, seed: 5, scale: 'small', now: NOW, errorRate: 0.6 });
    try {
      // The faults do not depend on time: no real waiting at all.
      const { client, retries } = recordingClient(sb, 0);
      expect(ids(await all(client.students({ pageLength: 10 })))).toEqual(
        ids(sb.school.students.filter((s) => s.current)),
      );
      expect(ids(await all(client.studentTeams({ pageLength: 20 })))).toEqual(ids(sb.school.memberships));
      expect(retries.length).toBeGreaterThan(3);
      expect(
        retries.every((r) => r.status !== null && r.status >= 500 && r.waitMs === scheduled(r.retry)),
      ).toBe(true);
      expect(Math.max(...retries.map((r) => r.retry))).toBeGreaterThanOrEqual(2);
      const server = sb.stats();
      const faults = Object.values(server.routes).reduce(
        (n, r) =>
          n + Object.entries(r.byStatus).reduce((m, [status, c]) => m + (Number(status) >= 500 ? c : 0), 0),
        0,
      );
      expect(client.totals()).toEqual({
        requests: server.total,
        retries: faults,
        throttled: 0,
        errors: faults,
      });

      // Writes: whichever attempt faults first is not repeated.
      const before = client.totals().requests;
      let writeError: unknown;
      for (let i = 0; i < 20 && writeError === undefined; i++) {
        await client
          .createAbsences([
            {
              studentId: sb.school.students[0]!.id,
              startDate: '2026-03-20T08:00:00Z',
              endDate: '2026-03-20T09:00:00Z',
              explained: true,
              reason: `try ${i}`,
            },
          ])
          .catch((e: unknown) => {
            writeError = e;
          });
      }
      expect(writeError).toBeInstanceOf(ServerError);
      const writes = client.stats()['POST /pre-explained-absences']!;
      expect(writes.retries).toBe(0);
      expect(writes.errors).toBe(1);
      expect(client.totals().requests - before).toBe(writes.requests);
    } finally {
      await sb.close();
    }
  });
});

describe('malformed records against the sandbox', () => {
  it('each is reported with its id and skipped; the rest of every listing is kept', async () => {
    const sb = await startSandbox({ port: 0, seed: 5, scale: 'small', now: NOW, malformedRate: 0.15 });
    try {
      const reported: MalformedRecord[] = [];
      const client = clientOf(sb, { onMalformed: (m) => reported.push(m) });
      const school = sb.school;
      const starts = school.sessions.map((s) => s.start);
      const year = {
        startDateTime: new Date(Math.min(...starts) - 86_400_000).toISOString(),
        endDateTime: new Date(Math.max(...starts) + 86_400_000).toISOString(),
      };
      const listings: [string, number[], ((c: UpstreamClient) => AsyncIterable<Page<{ id: number }>>)[]][] = [
        [
          'sessions',
          ids(school.sessions),
          [(c) => c.sessions({ ...year, includeTeams: true, includeStaff: true })],
        ],
        [
          'teams',
          ids(school.teams),
          [(c) => c.teams({ includeStudents: true }), (c) => c.teams({ hidden: true })],
        ],
        ['students', ids(school.students), [(c) => c.students(), (c) => c.students({ current: false })]],
        ['student-teams', ids(school.memberships), [(c) => c.studentTeams()]],
        [
          'attendance-records',
          ids(school.attendanceRecords),
          [(c) => c.attendanceRecords({ timePeriod: 'custom', ...year })],
        ],
        ['users', ids(school.users), [(c) => c.users()]],
        ['incidents', ids(school.incidents), [(c) => c.incidents()]],
        [
          'locations',
          ids(school.locations.filter((l) => !l.association)),
          [(c) => c.locations(), (c) => c.locations({ archived: true })],
        ],
        ['departments', ids(school.departments), [(c) => c.departments()]],
        ['year-groups', ids(school.yearGroups), [(c) => c.yearGroups()]],
        ['activities', ids(school.activities), [(c) => c.activities()]],
        [
          'activity-selections',
          ids(school.activitySelections),
          [(c) => c.activitySelections(), (c) => c.activitySelections({ isDeleted: true })],
        ],
        ['pre-explained-absences', ids(school.absences), [(c) => c.preExplainedAbsences()]],
      ];
      let totalSkipped = 0;
      for (const [resource, universe, reads] of listings) {
        const kept: number[] = [];
        const skipped: MalformedRecord[] = [];
        for (const read of reads) {
          const { records, pages } = await collect(read(client));
          kept.push(...records.map((r) => r.id));
          skipped.push(...pages.flatMap((p) => p.skipped));
        }
        const bad = universe.filter((id) => sb.isMalformed(resource, id));
        // The garbage-id variety reports the id as received; its digits are still the record's.
        const skippedIds = skipped.map((m) => Number(/\d+/.exec(m.id ?? '')?.[0]));
        expect(
          skippedIds.sort((a, b) => a - b),
          resource,
        ).toEqual(bad);
        expect(
          kept.sort((a, b) => a - b),
          resource,
        ).toEqual(universe.filter((id) => !bad.includes(id)));
        expect(skipped.every((m) => m.endpoint === `GET /${resource}` && m.reason.length > 0)).toBe(true);
        totalSkipped += skipped.length;
      }
      expect(totalSkipped).toBeGreaterThan(20);
      expect(reported).toHaveLength(totalSkipped);
    } finally {
      await sb.close();
    }
  });
});
