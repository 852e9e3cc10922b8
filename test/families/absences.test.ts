// FamilyAbsences (families/absences.ts) from outside, on a real SQLite store filled by a real pull from the sandbox,
// writing to a second sandbox of the same school over HTTP whose every answer takes a moment (as a school's service
// on a phone's connection does). Found walking the demo at 390 px: a double tap on "Confirm: can't make it" made one
// absence, as it must, but the family was answered by the second tap, which found the first still sending and said
// "We could not confirm it yet with the school's system" about a report confirmed a fraction of a second later. The
// page has no script, so it kept saying so until the family reloaded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import type { Id } from '../../src/domain/types.ts';
import { absencesUpstream, familyClients, markedBy } from '../../src/families/absence-upstream.ts';
import { FamilyAbsences, type FamilyStore, type ReportingLink } from '../../src/families/absences.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { DONE_WORDS, type Done } from '../../src/web/absence-done.ts';
import { openTestStore, type TestStore, testClient, testSchool } from '../sync/helpers.ts';

const NOW = '2026-03-02T00:00:00.000Z';
const SEED = 11;
/** Every answer of the upstream the families write to takes this long: the second tap comes while the first waits. */
const LATENCY_MS = 300;

let reads: Sandbox;
let writes: Sandbox;
let ts: TestStore;
let school: SchoolConfig;
let families: FamilyAbsences;

beforeAll(async () => {
  // Same seed and clock: the same school. The store is filled from the quick one; family acts go to the slow one.
  reads = await startSandbox({ scale: 'small', seed: SEED, now: NOW });
  writes = await startSandbox({ scale: 'small', seed: SEED, now: NOW, latencyMs: LATENCY_MS });
  ts = await openTestStore('sqlite');
  const summary = await pullSchool({
    store: ts.store,
    client: testClient(reads),
    school: testSchool(reads),
    kind: 'full',
    now: () => new Date(NOW),
  });
  expect(summary.status).toBe('succeeded');
  school = testSchool(writes, { families: { reportAbsences: true } });
  families = new FamilyAbsences({
    store: ts.store,
    schools: [school],
    clientFor: familyClients(),
    now: () => new Date(NOW),
  });
}, 120_000);

afterAll(async () => {
  await ts?.cleanup();
  await reads?.close();
  await writes?.close();
});

/** A child's own link and one of its upcoming sessions, as its page lists them. */
async function childLink(nth = 0): Promise<{ link: ReportingLink; studentId: Id; sessionId: Id }> {
  for (const student of reads.school.students) {
    const sessions = (
      await ts.store.records.listSessions(school.id, {
        studentId: student.id,
        from: NOW,
        to: new Date(Date.parse(NOW) + 30 * 86_400_000).toISOString(),
      })
    ).filter((s) => !s.cancelled && !s.bye && Date.parse(s.start) > Date.parse(NOW));
    if (sessions.length <= nth) continue;
    const link: ReportingLink = {
      schoolId: school.id,
      kind: 'child',
      tokenHash: 'ab'.repeat(32),
      children: [{ studentId: student.id, label: 'the child' }],
      shown: new Set(sessions.map((s) => s.id)),
    };
    return { link, studentId: student.id, sessionId: sessions[nth]!.id };
  }
  throw new Error('the sandbox school has no student with an upcoming session');
}

describe('a double tap on "can\u2019t make it"', () => {
  it('makes one absence, and the tap that came second is answered with it, not "could not confirm"', async () => {
    const { link, studentId, sessionId } = await childLink();
    const ask = { studentId, sessionId, words: 'Dentist', address: '127.0.0.9' };
    const first = families.report(link, ask);
    // The second tap, once the first has taken the reservation and is writing upstream.
    await new Promise((r) => setTimeout(r, LATENCY_MS / 2));
    const second = await families.report(link, ask);
    const firstOutcome = await first;
    expect(firstOutcome).toMatchObject({ ok: true, kind: 'reported', sessionId });
    expect(second).toMatchObject({ ok: true, kind: 'already-reported', sessionId });
    const act = await ts.store.families.getAbsenceAct({ schoolId: school.id, studentId, sessionId });
    expect(act?.state).toBe('reported');
    expect(markedBy(await absencesUpstream(testClient(writes), studentId, act!))).toHaveLength(1);
  }, 60_000);
});

describe('a second tap after a first send that failed and could not be recorded', () => {
  it('is told the truth (not confirmed, being checked), never "on its way", and nothing is sent twice', async () => {
    const { link, studentId, sessionId } = await childLink(1);
    // The first send never reaches the school's system; the store then refuses, once, to end its reservation.
    let releases = 0;
    const store: FamilyStore = {
      ...ts.store,
      families: new Proxy(ts.store.families, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop === 'releaseAbsenceAct')
            return async (...args: Parameters<typeof target.releaseAbsenceAct>) => {
              if (releases++ === 0) throw new Error('SQLITE_FULL: database or disk is full');
              return target.releaseAbsenceAct(...args);
            };
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
    };
    const real = familyClients();
    const down = familyClients();
    let sends = 0;
    let clock = Date.parse(NOW);
    const tapped = new FamilyAbsences({
      store,
      schools: [school],
      clientFor: (s) =>
        sends++ === 0 ? down({ ...s, upstream: { ...s.upstream, url: 'http://127.0.0.1:9/' } }) : real(s),
      now: () => new Date(clock),
    });
    const ask = { studentId, sessionId, words: 'Sick', address: '127.0.0.10' };
    const first = await tapped.report(link, ask);
    expect(first).toMatchObject({ ok: false });
    expect(first.ok === false && first.message).toContain('nothing was reported');
    // The family reads that and taps again a little later.
    clock += 20_000;
    const second = await tapped.report(link, ask);
    expect(second.ok).toBe(true);
    const kind = second.ok ? second.kind : 'refused';
    expect(kind).not.toBe('pending');
    const words: string = DONE_WORDS[kind as Done];
    expect(words).not.toMatch(/on its way|we sent/i);
    expect(words).toMatch(/could not confirm/i);
    expect(words).toMatch(/within a minute/);
    // Nothing written by the second tap either: the settle step decides, by the mark, whether the first arrived.
    const act = await ts.store.families.getAbsenceAct({ schoolId: school.id, studentId, sessionId });
    expect(markedBy(await absencesUpstream(testClient(writes), studentId, act!))).toHaveLength(0);
  }, 60_000);
});
