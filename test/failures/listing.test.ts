// A listing cut short (lastPage one less, pages that overlap) is no evidence that records are gone: the real
// `rostercal sync --full` deletes nothing because of it and says which listing and by how much; a record without a
// usable id holds deletions back and says so on every run, in the summary and in `rostercal status`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

// Each test runs school-scale pulls as CLI children: 36-40 s each at load 25, so their limits are deadlines of
// minutes (the 60 s default cut two of them short), not measures.
describe('a listing cut short (rostercal sync, sandbox listing faults)', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let env: Record<string, string>;
  beforeAll(async () => {
    // A school's size: sessions come 250 to a page, so the listing has pages to lose.
    sandbox = await startWeekSandbox({ seed: 11, scale: 'school' });
    ts = await openTestStore('sqlite');
    env = schoolEnv(sandbox, ts.env);
    const first = rostercal(['sync', '--full'], env);
    expect(await first.exit, first.output()).toBe(0);
  }, 180_000);
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  const liveSessions = async () => (await ts.store.records.list('hillcrest', 'sessions')).length;

  it('lastPage one less: nothing deleted, the run flagged with the listing and the count missing', async () => {
    const before = await liveSessions();
    expect(before).toBeGreaterThan(2000);
    sandbox.setListingFaults({ sessions: 'short' });
    try {
      const child = rostercal(['sync', '--full'], env);
      expect(await child.exit, child.output()).toBe(0);
      const out = child.output();
      expect(out).toMatch(/full pull finished, SUSPICIOUS/);
      expect(out).toMatch(
        /warning: sessions: the sessions listing is incomplete: it announced [\d,]+ records and delivered [\d,]+ distinct \([\d,]+ missing\); deleted nothing/,
      );
      expect(await liveSessions()).toBe(before);
      const [run] = await ts.store.runs.listRuns('hillcrest', { limit: 1 });
      expect(run).toMatchObject({ status: 'suspicious' });
      expect(run!.counts.sessions!.deleted).toBe(0);

      const status = rostercal(['status'], env);
      expect(await status.exit).toBe(0);
      expect(status.output()).toMatch(/full\s+suspicious/);
      expect(status.output()).toMatch(
        /sessions listing is incomplete: .*\([\d,]+ missing\); deleted nothing/,
      );
    } finally {
      sandbox.setListingFaults({});
    }
  }, 180_000);

  it('pages that overlap: a record repeated is flagged; nothing deleted', async () => {
    const before = await liveSessions();
    sandbox.setListingFaults({ sessions: 'overlap' });
    try {
      const child = rostercal(['sync', '--full'], env);
      expect(await child.exit, child.output()).toBe(0);
      expect(child.output()).toMatch(
        /sessions listing is incomplete: it announced ([\d,]+) records and delivered \1 distinct \(1 repeated\); deleted nothing/,
      );
      expect(await liveSessions()).toBe(before);
      // Each record counted once, however often the listing repeated it (found from outside: 'unchanged' was
      // one more than the sessions there are).
      const [run] = await ts.store.runs.listRuns('hillcrest', { limit: 1 });
      const counted = run!.counts.sessions!;
      expect(counted.added + counted.changed + counted.unchanged).toBe(before);
    } finally {
      sandbox.setListingFaults({});
    }
  }, 180_000);

  it('an incomplete listing of changes does not move the cursor', async () => {
    const cursor = await ts.store.records.getCursor('hillcrest', 'updatedAfter:sessions');
    expect(cursor).not.toBeNull();
    sandbox.setListingFaults({ sessions: 'short' });
    try {
      // Changes since the cursor: every session, so that the listing has more than one page to lose.
      await ts.store.records.setCursor('hillcrest', 'updatedAfter:sessions', '2000-01-01T00:00:00.000Z');
      const child = rostercal(['sync'], env);
      expect(await child.exit, child.output()).toBe(0);
      expect(child.output()).toMatch(/incremental pull finished, SUSPICIOUS/);
      expect(child.output()).toMatch(
        /sessions listing is incomplete: .*missing\); will read these changes again/,
      );
      expect(await ts.store.records.getCursor('hillcrest', 'updatedAfter:sessions')).toBe(
        '2000-01-01T00:00:00.000Z',
      );
    } finally {
      sandbox.setListingFaults({});
    }
    const healed = rostercal(['sync'], env);
    expect(await healed.exit).toBe(0);
    expect(healed.output()).toMatch(/incremental pull succeeded/);
    expect(await ts.store.records.getCursor('hillcrest', 'updatedAfter:sessions')).not.toBe(
      '2000-01-01T00:00:00.000Z',
    );
  }, 180_000);

  it('the sandbox takes listing faults at run time over HTTP and rejects unknown ones', async () => {
    const bad = await fetch(`${sandbox.url}/_sandbox/chaos`, {
      method: 'POST',
      body: JSON.stringify({ listingFaults: { sessions: 'sometimes' } }),
    });
    expect(bad.status).toBe(400);
    const ok = await fetch(`${sandbox.url}/_sandbox/chaos`, {
      method: 'POST',
      body: JSON.stringify({ listingFaults: { teams: 'short' } }),
    });
    expect(await ok.json()).toEqual({ listingFaults: { teams: 'short' } });
    const page = (await (
      await fetch(`${sandbox.url}/teams?pageLength=10`, {
        headers: { authorization: `Bearer ${sandbox.token}` },
      })
    ).json()) as { pagination: { lastPage: number; numRecords: number } };
    expect(page.pagination.lastPage).toBe(Math.ceil(page.pagination.numRecords / 10) - 1);
    sandbox.setListingFaults({});
  });
});

describe('malformed records without a usable id (rostercal sync, rostercal status)', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small', malformedRate: 0.1 });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('are said, with their count, in the summary of every run and in status', async () => {
    const env = schoolEnv(sandbox, ts.env);
    const pattern =
      /(\w+): (\d+) malformed records? without a usable id skipped \(no deletions of it until upstream fixes them\)/;
    for (let i = 0; i < 2; i++) {
      const child = rostercal(['sync', '--full'], env);
      expect(await child.exit, child.output()).toBe(0);
      expect(child.output()).toMatch(/full pull finished, SUSPICIOUS/);
      expect(child.output()).toMatch(pattern);
    }
    const status = rostercal(['status'], env);
    expect(await status.exit).toBe(0);
    const shown = status.output().match(new RegExp(pattern.source, 'g')) ?? [];
    // Both runs, each in full (not cut at a column width).
    expect(status.output()).toMatch(/#1\s+full\s+suspicious/);
    expect(status.output()).toMatch(/#2\s+full\s+suspicious/);
    expect(shown.length).toBeGreaterThanOrEqual(2);
  }, 180_000);
});
