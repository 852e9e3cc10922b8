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
