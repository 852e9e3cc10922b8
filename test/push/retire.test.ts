// After the last push stage (push/retire.ts): a public calendar replaced after a feed rotation is deleted through
// the real Google provider (from the fake Google over HTTP) once its successor is complete, the replacement audited
// with both ids and the rotation no longer pending, in a real SQLite store; an incomplete successor keeps it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingRotations, setPending } from '../../src/push/live-rotation.ts';
import { retireReplaced } from '../../src/push/retire.ts';
import { type GoogleStage, NOW, startGoogleStage } from './google-stage.ts';
import { SCHOOL, spec, stageCalendar, TARGET } from './stage-calendars.ts';

/** A calendar as the apply stage hands it on (its type is apply.ts's, which this file does not test). */
type Applied = Parameters<typeof retireReplaced>[1][number];

let g: GoogleStage;
beforeAll(async () => {
  g = await startGoogleStage();
});
afterAll(() => g?.close());

/** The public calendar of team `team` at generation 2, written this run, with calendars it replaced. */
async function successor(
  team: number,
  retire: string[],
  over: Partial<Applied['outcome']> = {},
): Promise<Applied> {
  const key = `team:${team}`;
  const ref = await g.remoteCalendar(key);
  const c = stageCalendar(key, { spec: spec(key, { generation: 2 }), ref, retire });
  return {
    spec: c.spec,
    ref,
    retire,
    outcome: { ...c.outcome, remoteCalendarId: ref.remoteCalendarId, ...over },
  };
}
const inFake = (id: string) => g.fake.calendars().some((c) => c.id === id);

describe('retiring replaced public calendars', () => {
  it('deletes them once the successor is complete, audits both ids and clears the pending rotation', async () => {
    const old = (await g.remoteCalendar('old:12')).remoteCalendarId;
    const next = await successor(12, [old]);
    await setPending(g.ts.store, SCHOOL, TARGET, 'team:12', true);
    const { ctx, reached, notes } = g.context();
    const [outcome] = await retireReplaced(ctx, [next]);
    expect(inFake(old)).toBe(false);
    expect(outcome).toEqual({ ...next.outcome, note: `replaced ${old}` });
    expect(reached).toEqual([outcome]);
    expect(notes).toEqual([]);
    expect(await pendingRotations(g.ts.store, SCHOOL, TARGET)).toEqual([]);
    expect(await g.ts.store.access.listAudit({ schoolId: SCHOOL, action: 'feed-rotate' })).toMatchObject([
      {
        at: NOW,
        actor: `push (target ${TARGET})`,
        teamId: 12,
        detail: `team:12: live Google calendar ${old} deleted, replaced by ${next.ref!.remoteCalendarId}`,
      },
    ]);
  });

  it('keeps them while the successor failed a write, was not trusted or is not written', async () => {
    const olds = await Promise.all(
      [13, 14, 15].map(async (t) => (await g.remoteCalendar(`old:${t}`)).remoteCalendarId),
    );
    const base = (await successor(13, [])).outcome;
    const applied = [
      await successor(13, [olds[0]!], { counts: { ...base.counts, failed: 1 } }),
      await successor(14, [olds[1]!], { untrusted: true }),
      await successor(15, [olds[2]!], { state: 'paused' }),
    ];
    await setPending(g.ts.store, SCHOOL, TARGET, 'team:13', true);
    const { ctx, reached, notes } = g.context();
    const outcomes = await retireReplaced(ctx, applied);
    expect(olds.map(inFake)).toEqual([true, true, true]);
    expect(outcomes).toEqual(applied.map((c) => c.outcome));
    expect(reached).toEqual([]);
    expect(notes).toEqual(
      ['team:13', 'team:14', 'team:15'].map(
        (k) => `${k}: the replaced calendar is kept (not public) until the new one is complete`,
      ),
    );
    expect(await pendingRotations(g.ts.store, SCHOOL, TARGET)).toEqual(['team:13']);
  });

  it('leaves calendars that are not public as they are', async () => {
    const old = (await g.remoteCalendar('old:16')).remoteCalendarId;
    const plain = { ...(await successor(16, [old])), spec: spec('team:16') };
    const { ctx, reached } = g.context();
    expect(await retireReplaced(ctx, [plain])).toEqual([plain.outcome]);
    expect(inFake(old)).toBe(true);
    expect(reached).toEqual([]);
  });
});
