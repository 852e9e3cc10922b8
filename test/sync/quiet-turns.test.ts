// Review of issue 46's statement cuts (79af380, 6085a93): what an unchanged pull no longer writes must not cost a
// change. Custom-field metadata dropped at the download when unchanged must still be written, and move the data
// version, when it changes while no session does; the cursors of a resource with nothing to write wait for a
// later transaction, so a pull stopped before it must leave them where they were and lose no edit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { DIALECTS, openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

describe.each(DIALECTS)('quiet turns on %s', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const school = () => testSchool(sandbox);
  const pull = (kind: 'full' | 'incremental', signal?: AbortSignal) =>
    pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: school(),
      kind,
      ...(signal ? { signal } : {}),
    });
  const later = (ms: number) => sandbox.setNow(new Date(Date.parse(sandbox.now()) + ms).toISOString());

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    expect((await pull('full')).status).toBe('succeeded');
    later(60_000);
    expect((await pull('incremental')).status).toBe('succeeded');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it.each(['incremental', 'full'] as const)(
    'custom-field metadata changed while no session did is stored and moves the data version (%s)',
    async (kind) => {
      const field = sandbox.school.customFields[0]!;
      field.label = `${field.label} (${kind})`;
      field.showToUserTypes = field.showToUserTypes.includes('guardian')
        ? field.showToUserTypes.filter((t) => t !== 'guardian')
        : [...field.showToUserTypes, 'guardian'];
      const version = await ts.store.records.dataVersion('hillcrest');
      later(60_000);
      const summary = await pull(kind);
      expect(summary.status).toBe('succeeded');
      expect(summary.counts.sessions).toMatchObject({ added: 0, changed: 0, deleted: 0 });
      expect(summary.counts.customFields).toMatchObject({ changed: 1 });
      const stored = await ts.store.records.get('hillcrest', 'customFields', field.key as never);
      expect(stored).toMatchObject({ label: field.label, showToUserTypes: field.showToUserTypes });
      expect(await ts.store.records.dataVersion('hillcrest')).toBeGreaterThan(version);
      // And an unchanged pull after it writes none of it again, nor moves the version.
      const settled = await ts.store.records.dataVersion('hillcrest');
      later(60_000);
      const again = await pull(kind);
      expect(again.counts.customFields).toMatchObject({ added: 0, changed: 0 });
      expect(await ts.store.records.dataVersion('hillcrest')).toBe(settled);
    },
  );

  it('a pull stopped after quiet resources, before the next transaction, leaves their cursors and loses no edit', async () => {
    later(60_000);
    const before = await ts.store.records.cursors('hillcrest');
    // Teams and absences unchanged (quiet turns: their cursors deferred); a session edited upstream.
    const session = sandbox.school.sessions.find(
      (s) => s.start > Date.parse(sandbox.now()) && s.status === 'confirmed',
    )!;
    session.title = `${session.title} (edited)`;
    session.updatedAt = Date.parse(sandbox.now());
    const version = await ts.store.records.dataVersion('hillcrest');
    later(1_000);
    // Stopped once the absences' turn is done: the sessions' transaction, which would carry the deferred
    // cursors, never runs.
    const stop = new AbortController();
    const stopped = await pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: school(),
      kind: 'incremental',
      signal: stop.signal,
      onProgress: (e) => {
        if (e.type === 'resource-done' && e.kind === 'absences') stop.abort();
      },
    }).then(
      () => 'finished',
      (err: Error) => err.name,
    );
    expect(stopped).toBe('PullInterruptedError');
    const after = await ts.store.records.cursors('hillcrest');
    for (const kind of ['teams', 'absences', 'sessions'])
      for (const key of [`updatedAfter:${kind}`, `readAt:${kind}`])
        expect(after.get(key), key).toBe(before.get(key));
    expect((await ts.store.records.get('hillcrest', 'sessions', session.id))?.title).not.toBe(session.title);
    expect(await ts.store.records.dataVersion('hillcrest')).toBe(version);
    // The edit reaches the store at the next pull, and moves the data version.
    later(1_000);
    const next = await pull('incremental');
    expect(next.status).toBe('succeeded');
    expect(next.counts.sessions!.changed).toBe(1);
    expect(await ts.store.records.get('hillcrest', 'sessions', session.id)).toMatchObject({
      title: session.title,
    });
    expect(await ts.store.records.dataVersion('hillcrest')).toBeGreaterThan(version);
    const settled = await ts.store.records.cursors('hillcrest');
    for (const kind of ['teams', 'absences', 'sessions'])
      expect(Date.parse(settled.get(`updatedAfter:${kind}`)!), kind).toBeGreaterThan(
        Date.parse(before.get(`updatedAfter:${kind}`)!),
      );
  });
});
