// A family's act against the upstream (families/absence-upstream.ts): what a failed write means (nothing made, or
// unknown: read back later), what the outcome words tell the family (absence-outcomes.ts), which absences a link
// made, and the act's own short budget against the real sandbox upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchool } from '../../src/config.ts';
import { familyReason } from '../../src/domain/family-absence.ts';
import type { PreExplainedAbsence } from '../../src/domain/types.ts';
import { notMade, notRecorded, tooMany } from '../../src/families/absence-outcomes.ts';
import {
  absencesUpstream,
  FAMILY_REQUEST_TIMEOUT_MS,
  familyClients,
  markedBy,
  writeOutcome,
} from '../../src/families/absence-upstream.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import {
  BadRequestError,
  ForbiddenError,
  RateLimitedError,
  ServerError,
  TimeoutError,
  UnreachableError,
} from '../../src/upstream/errors.ts';

const E = '/pre-explained-absences';

describe('what a failed write means', () => {
  it('refused (4xx, 429) or never reached is not made; a 5xx, a timeout or anything else is unknown', () => {
    expect(writeOutcome(new BadRequestError(E, 400, 'bad'))).toBe('not-made');
    expect(writeOutcome(new ForbiddenError(E, 403, 'no'))).toBe('not-made');
    expect(writeOutcome(new RateLimitedError(E, 'slow down', 60_000))).toBe('not-made');
    expect(writeOutcome(new UnreachableError(E, 'http://127.0.0.1:9', 'ECONNREFUSED'))).toBe('not-made');
    expect(writeOutcome(new ServerError(E, 502, 'bad gateway', true))).toBe('unknown');
    expect(writeOutcome(new TimeoutError(E, 3_500))).toBe('unknown');
    expect(writeOutcome(new Error('socket hang up'))).toBe('unknown');
  });

  it('tells the family nothing was done only in the words of what happened', () => {
    const forbidden = notMade('report', new ForbiddenError(E, 403, 'no'));
    expect(forbidden.forbidden).toBe(true);
    expect(forbidden.outcome).toMatchObject({ ok: false, status: 502 });
    expect(forbidden.why).toBe(`upstream 403 on ${E}`);
    const busy = notMade('undo', new RateLimitedError(E, 'slow down', null));
    expect(busy.outcome).toMatchObject({ ok: false, status: 503 });
    expect(busy.outcome.ok === false && busy.outcome.message).toContain('nothing was undone');
    const unreachable = notMade('report', new UnreachableError(E, 'http://127.0.0.1:9', 'ECONNREFUSED'));
    expect(unreachable.outcome).toMatchObject({ ok: false, status: 503 });
    expect(unreachable.why).toBe(`upstream unreachable on ${E}`);
    expect(notMade('report', new BadRequestError(E, 400, 'bad')).outcome).toMatchObject({ status: 502 });
    // Not an upstream failure: not this module's to explain.
    expect(() => notMade('report', new TypeError('bug'))).toThrow(TypeError);
    expect(notRecorded('undo')).toMatchObject({ ok: false, status: 503 });
    expect(tooMany(61)).toMatchObject({ status: 429, retryAfterS: 61 });
    expect(tooMany(61)).toMatchObject({ message: expect.stringContaining('2 minutes') });
    expect(tooMany(5)).toMatchObject({ message: expect.stringContaining('1 minute,') });
  });
});

describe('which absences a link made', () => {
  const a = (id: number, reason: string): PreExplainedAbsence => ({
    id,
    studentId: 1,
    start: '2026-03-02T05:00:00.000Z',
    end: '2026-03-02T06:00:00.000Z',
    explained: true,
    reason,
  });
  const list = [
    a(1, familyReason('aaaaaaaaaaaa', 'dentist')),
    a(2, familyReason('bbbbbbbbbbbb', '')),
    a(3, 'Medical appointment'),
  ];
  it('keeps only rostercal’s marks, and of one link when named', () => {
    expect(markedBy(list).map((x) => x.id)).toEqual([1, 2]);
    expect(markedBy(list, 'bbbbbbbbbbbb').map((x) => x.id)).toEqual([2]);
    expect(markedBy(list, 'cccccccccccc')).toEqual([]);
  });
});

describe('the act’s client, against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ scale: 'small', seed: 3, now: '2026-03-02T00:00:00Z' });
  }, 60_000);
  afterAll(() => sandbox?.close());

  it('one client per school, within the act’s budget; reads the child’s overlapping absences only', async () => {
    const school = parseSchool({
      id: 'hill',
      name: 'Hill',
      upstream: { url: sandbox.url, token: sandbox.token, timeoutMs: 30_000 },
      timeZone: 'UTC',
    });
    const clients = familyClients();
    const client = clients(school);
    expect(clients(school)).toBe(client);
    expect(FAMILY_REQUEST_TIMEOUT_MS).toBeLessThanOrEqual(5_000);
    const withAbsence = sandbox.school.absences.find((x) => x.explained);
    expect(withAbsence, 'the generated school has pre-explained absences').toBeDefined();
    const { id, studentId } = withAbsence!;
    const range = {
      start: new Date(withAbsence!.start).toISOString(),
      end: new Date(withAbsence!.end).toISOString(),
    };
    const found = await absencesUpstream(client, studentId, range);
    expect(found.map((x) => x.id)).toContain(id);
    for (const x of found) {
      expect(x.studentId).toBe(studentId);
      expect(Date.parse(x.start) < withAbsence!.end && Date.parse(x.end) > withAbsence!.start).toBe(true);
    }
    // A range that ends before the absence begins holds none of it.
    const before = new Date(withAbsence!.start - 3_600_000).toISOString();
    const none = await absencesUpstream(client, studentId, {
      start: '2000-01-01T00:00:00.000Z',
      end: before,
    });
    expect(none.map((x) => x.id)).not.toContain(id);
  });
});
