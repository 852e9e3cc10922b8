// Settling families' acts whose outcome was not known (families/absence-settle.ts), on a real SQLite store against the
// real sandbox over HTTP: a report found upstream by its mark is reported, one not found is released only after the
// upstream has had its time, an undo deletes what the link made, and a school that turned reporting off is left.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchool, type SchoolConfig } from '../../src/config.ts';
import { familyReason } from '../../src/domain/family-absence.ts';
import type { Id, PreExplainedAbsence } from '../../src/domain/types.ts';
import { type SettleDeps, settleAbsenceActs } from '../../src/families/absence-settle.ts';
import { absencesUpstream, familyClients } from '../../src/families/absence-upstream.ts';
import { createLogger, silentLogger } from '../../src/log.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { AbsenceAct, Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

const NOW = '2026-03-02T00:00:00.000Z';
const LINK = 'abcdef012345';
let sandbox: Sandbox;
let ts: TestStore;
let store: Store;
let school: SchoolConfig;
let students: Id[];

beforeAll(async () => {
  sandbox = await startSandbox({ scale: 'small', seed: 5, now: NOW });
  ts = await openTestStore('sqlite');
  store = ts.store;
  school = hill();
  await store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
  students = sandbox.school.students.map((s) => s.id);
}, 60_000);

afterAll(async () => {
  await ts?.cleanup();
  await sandbox?.close();
});

function hill(patch: Record<string, unknown> = {}): SchoolConfig {
  return parseSchool({
    id: 'hill',
    name: 'Hill',
    upstream: { url: sandbox.url, token: sandbox.token },
    timeZone: 'UTC',
    families: { reportAbsences: true },
    ...patch,
  });
}

/** An act of `state` for the n-th student, over a slot on 10 March of its own (so acts never share absences). */
function act(n: number, state: AbsenceAct['state'], updatedAt: string, sessionId = 900 + n): AbsenceAct {
  const start = new Date(Date.parse('2026-03-10T00:00:00.000Z') + n * 7_200_000).toISOString();
  const end = new Date(Date.parse(start) + 3_600_000).toISOString();
  return {
    schoolId: 'hill',
    studentId: students[n]!,
    sessionId,
    linkId: LINK,
    state,
    absenceId: null,
    start,
    end,
    reservedAt: updatedAt,
    updatedAt,
  };
}

async function writeUpstream(a: AbsenceAct, linkId = LINK): Promise<PreExplainedAbsence> {
  const [made] = await familyClients()(school).createAbsences([
    {
      studentId: a.studentId,
      startDate: a.start,
      endDate: a.end,
      explained: true,
      reason: familyReason(linkId, ''),
    },
  ]);
  return made!;
}

function deps(now: string, over: Partial<SettleDeps> = {}) {
  const settled: [AbsenceAct, Id][] = [];
  const withdrawn: [AbsenceAct, Id[]][] = [];
  const d: SettleDeps = {
    store,
    schools: new Map([['hill', school]]),
    clientFor: familyClients(),
    now: () => new Date(now),
    log: silentLogger,
    settle: async (a, made) => {
      settled.push([a, made.id]);
      await store.families.moveAbsenceAct({ ...a, state: 'reported', absenceId: made.id }, [a.state]);
    },
    withdrawn: async (a, ids) => {
      withdrawn.push([a, ids]);
      await store.families.releaseAbsenceAct(a, [a.state]);
    },
    ...over,
  };
  return { d, settled, withdrawn };
}

const audits = async () =>
  (await store.access.listAudit({ schoolId: 'hill' }))
    .filter((r) => r.actor === 'rostercal')
    .map((r) => r.detail);

describe('settling acts whose answer was lost', () => {
  it('reports an unknown act the upstream holds under its link’s mark, and audits it', async () => {
    const a = act(0, 'unknown', '2026-03-02T00:00:00.000Z');
    await store.families.moveAbsenceAct(a, [null]);
    // Another link's absence for the same child and time is not this act's.
    await writeUpstream(a, '0123456789ab');
    const made = await writeUpstream(a);
    const { d, settled } = deps('2026-03-02T00:00:05.000Z');
    expect(await settleAbsenceActs(d)).toBe(1);
    expect(settled.map(([x, id]) => [x.studentId, id])).toEqual([[a.studentId, made.id]]);
    expect(await store.families.getAbsenceAct(a)).toMatchObject({ state: 'reported', absenceId: made.id });
    expect(await audits()).toContain(
      `student ${a.studentId}: settled: reported (absence ${made.id}) (link ${LINK})`,
    );
    // Settled: the next pass finds nothing to do.
    expect(await settleAbsenceActs(deps('2026-03-02T00:00:10.000Z').d)).toBe(0);
  });

  it('keeps an unknown act not found while the upstream may still apply it, and releases it after', async () => {
    const a = act(1, 'unknown', '2026-03-02T00:01:00.000Z');
    await store.families.moveAbsenceAct(a, [null]);
    expect(await settleAbsenceActs(deps('2026-03-02T00:01:20.000Z').d)).toBe(0);
    expect(await store.families.getAbsenceAct(a)).toMatchObject({ state: 'unknown' });
    expect(await settleAbsenceActs(deps('2026-03-02T00:01:31.000Z').d)).toBe(1);
    expect(await store.families.getAbsenceAct(a)).toBeNull();
    expect(await audits()).toContain(
      `student ${a.studentId}: settled: not made, nothing was reported (link ${LINK})`,
    );
  });

  it('counts a write the upstream applied after its act was settled as not made, once it is found (issue 40)', async () => {
    // The answer was lost, and the upstream applied the write only after the 30 s the settle step waits.
    const a = act(5, 'unknown', '2026-03-02T00:05:00.000Z');
    await store.families.moveAbsenceAct(a, [null]);
    expect(await settleAbsenceActs(deps('2026-03-02T00:05:31.000Z').d)).toBe(1);
    // Not made, as far as anyone knows: no act stands, and it counts against no limit.
    expect(await store.families.getAbsenceAct(a)).toBeNull();
    const other = act(5, 'pending', '2026-03-02T00:05:40.000Z', 990);
    const limit = { max: 1, since: '2026-03-01T00:06:00.000Z' };
    expect(await store.families.reserveAbsence(other, limit)).toEqual({ taken: true });
    expect(await store.families.releaseAbsenceAct(other, ['pending'])).toBe(true);
    const late = await writeUpstream(a);
    // Within a minute of its last look, the settle step looks again, finds it by its mark, and it is reported.
    const { d, settled } = deps('2026-03-02T00:06:40.000Z');
    expect(await settleAbsenceActs(d)).toBe(1);
    expect(settled.map(([, id]) => id)).toEqual([late.id]);
    expect(await store.families.getAbsenceAct(a)).toMatchObject({ state: 'reported', absenceId: late.id });
    expect(await audits()).toContain(
      `student ${a.studentId}: settled: reported (absence ${late.id}) (link ${LINK})`,
    );
    // It counts now: the child's next report is over a limit of 1.
    expect(
      await store.families.reserveAbsence(act(5, 'pending', '2026-03-02T00:06:50.000Z', 991), limit),
    ).toEqual({
      taken: false,
      standing: 1,
    });
  });

  it('lets a family report again over an act not made, and forgets it a day after its report', async () => {
    const a = act(6, 'unknown', '2026-03-02T00:07:00.000Z');
    await store.families.moveAbsenceAct(a, [null]);
    expect(await settleAbsenceActs(deps('2026-03-02T00:07:31.000Z').d)).toBe(1);
    // The same session reported again is a new reservation, not an answer from the old act.
    const again = { ...a, state: 'pending' as const, reservedAt: '2026-03-02T00:08:00.000Z' };
    expect(await store.families.reserveAbsence(again, { max: 1, since: '2026-03-01T00:08:00.000Z' })).toEqual(
      {
        taken: true,
      },
    );
    expect(await store.families.getAbsenceAct(a)).toMatchObject({ state: 'pending' });
    expect(await store.families.releaseAbsenceAct(a, ['pending'])).toBe(true);
    // Not made and never found: looked for about once a minute, and gone a day after it was reported.
    const b = act(7, 'unknown', '2026-03-02T00:09:00.000Z');
    await store.families.moveAbsenceAct(b, [null]);
    expect(await settleAbsenceActs(deps('2026-03-02T00:09:31.000Z').d)).toBe(1);
    expect(await settleAbsenceActs(deps('2026-03-02T00:09:45.000Z').d)).toBe(0);
    const notMade = async (before: string) =>
      (await store.families.listUnsettledAbsenceActs(['not-made'], before)).filter(
        (x) => x.studentId === b.studentId,
      );
    expect(await notMade('2026-03-03T00:00:00.000Z')).toHaveLength(1);
    await settleAbsenceActs(deps('2026-03-03T00:09:01.000Z').d);
    expect(await notMade('2026-03-04T00:00:00.000Z')).toEqual([]);
  });

  it('leaves a pending act alone while an act could still be under way', async () => {
    const a = act(2, 'pending', '2026-03-02T00:02:00.000Z');
    await store.families.moveAbsenceAct(a, [null]);
    const made = await writeUpstream(a);
    const early = deps('2026-03-02T00:02:05.000Z');
    expect(await settleAbsenceActs(early.d)).toBe(0);
    expect(early.settled).toEqual([]);
    const late = deps('2026-03-02T00:02:11.000Z');
    expect(await settleAbsenceActs(late.d)).toBe(1);
    expect(late.settled.map(([, id]) => id)).toEqual([made.id]);
  });

  it('sends an undo again and withdraws what the link made', async () => {
    const a = act(3, 'undoing', '2026-03-02T00:03:00.000Z');
    const made = await writeUpstream(a);
    await store.families.moveAbsenceAct({ ...a, absenceId: made.id }, [null]);
    const { d, withdrawn } = deps('2026-03-02T00:03:11.000Z');
    expect(await settleAbsenceActs(d)).toBe(1);
    expect(withdrawn.map(([, ids]) => [...new Set(ids)])).toEqual([[made.id]]);
    expect(await absencesUpstream(familyClients()(school), a.studentId, a)).toEqual([]);
    expect(await store.families.getAbsenceAct(a)).toBeNull();
    expect(await audits()).toContain(`student ${a.studentId}: settled: withdrawn (link ${LINK})`);
  });

  it('leaves the acts of a school that does not take reports, and survives an upstream it cannot read', async () => {
    const a = act(4, 'unknown', '2026-03-02T00:04:00.000Z');
    await store.families.moveAbsenceAct(a, [null]);
    await writeUpstream(a);
    const off = hill({ families: { reportAbsences: false } });
    expect(
      await settleAbsenceActs(deps('2026-03-02T00:04:05.000Z', { schools: new Map([['hill', off]]) }).d),
    ).toBe(0);
    const gone = hill({ upstream: { url: 'http://127.0.0.1:9', token: 't' } });
    const warned: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        warned.push(String(chunk));
        done();
      },
    });
    const log = createLogger({ level: 'warn', destination });
    const down = deps('2026-03-02T00:04:05.000Z', { schools: new Map([['hill', gone]]), log });
    expect(await settleAbsenceActs(down.d)).toBe(0);
    expect(warned.join('')).toContain('a family report could not be settled yet');
    expect(await store.families.getAbsenceAct(a)).toMatchObject({ state: 'unknown' });
    expect(await settleAbsenceActs(deps('2026-03-02T00:04:05.000Z').d)).toBe(1);
  });
});
