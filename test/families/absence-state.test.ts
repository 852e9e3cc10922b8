// Whether families of a school may report absences now (families/absence-state.ts), on a real SQLite store: off by
// the school's setting; hidden after the upstream's 403, on every replica (the refusal is in the store) until serve
// starts again; hidden while the store cannot be written.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  absenceReporting,
  clearRefusal,
  REPORTING_OFF,
  readRefusal,
  recordRefusal,
} from '../../src/families/absence-state.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';

let dir: string;
let store: Store;
const on = { id: 'hill', families: { reportAbsences: true } };

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-absence-state-'));
  store = await openStore({ dataDir: dir });
  await store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
});

afterAll(async () => {
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('absence reporting per school', () => {
  it('is off unless the school turns it on', async () => {
    expect(await absenceReporting(store, { id: 'hill' })).toEqual({
      on: false,
      reason: 'off',
      why: REPORTING_OFF,
    });
    expect(await absenceReporting(store, { id: 'hill', families: { reportAbsences: false } })).toMatchObject({
      on: false,
      reason: 'off',
    });
    expect(await absenceReporting(store, on)).toEqual({ on: true });
  });

  it('is hidden after a refusal the store keeps, until it is cleared', async () => {
    const at = '2026-03-02T05:00:00.000Z';
    await recordRefusal(store, 'hill', { at, status: 403 });
    expect(await readRefusal(store, 'hill')).toEqual({ at, status: 403 });
    const hidden = await absenceReporting(store, on);
    expect(hidden).toMatchObject({ on: false, reason: 'refused', refusedAt: at });
    expect(hidden.on === false && hidden.why).toContain(
      `answered 403 to POST /pre-explained-absences at ${at}`,
    );
    // Another replica reads the same store: the same answer.
    const replica = await openStore({ dataDir: dir });
    try {
      expect(await absenceReporting(replica, on)).toMatchObject({ on: false, reason: 'refused' });
    } finally {
      await replica.close();
    }
    await clearRefusal(store, 'hill');
    expect(await readRefusal(store, 'hill')).toBeNull();
    expect(await absenceReporting(store, on)).toEqual({ on: true });
  });

  it('reads a refusal it cannot understand as none', async () => {
    await store.records.setCursor('hill', 'families.absences.refused', '{"at":5}');
    expect(await readRefusal(store, 'hill')).toBeNull();
    await store.records.setCursor('hill', 'families.absences.refused', 'not json');
    expect(await readRefusal(store, 'hill')).toBeNull();
  });

  it('is hidden while the store cannot be written: no report could be audited', async () => {
    const readOnly = { records: store.records, readOnly: 'the disk is full' };
    const state = await absenceReporting(readOnly, on);
    expect(state).toMatchObject({ on: false, reason: 'read-only' });
    expect(state.on === false && state.why).toContain('the disk is full');
  });
});
