// A `rostercal sync` process killed in the middle of a resource leaves the store as it was before that run for
// that resource (and everything after it), and the next run completes. Also: the CLI's output and exit status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { rostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { DIALECTS, openTestStore, snapshot, type TestStore, testClient, testSchool } from './helpers.ts';

function envFor(sandbox: Sandbox, ts: TestStore): Record<string, string> {
  return {
    UPSTREAM_URL: sandbox.url,
    UPSTREAM_TOKEN: sandbox.token,
    SCHOOL_TZ: 'Australia/Sydney',
    SCHOOL_ID: 'hillcrest',
    SCHOOL_NAME: 'Hillcrest College',
    ...(ts.env as Record<string, string>),
  };
}

describe('rostercal sync and status', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  beforeAll(async () => {
    // The CLI pulls on the real clock: a school of this week's shape.
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('pulls, prints progress and a summary, exits 0; status shows the runs', async () => {
    const env = envFor(sandbox, ts);
    const child = rostercal(['sync'], env);
    expect(await child.exit).toBe(0);
    const out = child.output();
    expect(out).toMatch(/Hillcrest College \[hillcrest\]: full pull succeeded \(first complete run: full\)/);
    expect(out).toMatch(/sessions: page 1 of \d+/);
    expect(out).toMatch(/^\s+sessions\s+full\s+\d+\s+0\s+0\s+0\s+0$/m);
    expect(out).toMatch(/upstream: \d+ requests, 0 retries, 0 throttled \(429\)/);
    expect(out).not.toContain(sandbox.token);

    const json = rostercal(['sync', '--json'], env);
    expect(await json.exit).toBe(0);
    const summary = JSON.parse(json.output().slice(json.output().indexOf('{')));
    expect(summary).toMatchObject({ kind: 'incremental', status: 'succeeded', upstream: { requests: 4 } });

    const status = rostercal(['status'], env);
    expect(await status.exit).toBe(0);
    expect(status.output()).toMatch(/#1\s+full\s+succeeded/);
    expect(status.output()).toMatch(/#2\s+incremental\s+succeeded/);
  });

  it('exits non-zero when the pull fails, and 2 for an unknown school', async () => {
    const bad = rostercal(['sync'], { ...envFor(sandbox, ts), UPSTREAM_TOKEN: 'wrong-token-1234' });
    expect(await bad.exit).toBe(1);
    expect(bad.output()).toMatch(/incremental pull FAILED/);
    expect(bad.output()).toMatch(/teams\s+FAILED/);
    expect(bad.output()).toMatch(/sessions\s+not attempted/);
    expect(bad.output()).toMatch(/GET \/teams failed with 401/);
    expect(bad.output()).not.toContain('wrong-token-1234');
    const unknown = rostercal(['sync', '--school', 'nope'], envFor(sandbox, ts));
    expect(await unknown.exit).toBe(2);
    expect(unknown.output()).toContain('no school "nope" in the configuration (known: hillcrest)');
  });
});

describe.each(DIALECTS)('crash mid-run (%s)', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;

  beforeAll(async () => {
    // Latency keeps requests to come after the teams' first page until the test holds the upstream (below).
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small', latencyMs: 50 });
    ts = await openTestStore(dialect);
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('a killed run leaves each resource as it was before that run; the next run completes', async () => {
    const store = ts.store;
    const school = testSchool(sandbox);
    expect((await pullSchool({ store, client: testClient(sandbox), school, kind: 'full' })).status).toBe(
      'succeeded',
    );
    const before = await snapshot(store, school.id);
    expect(before.sessions!.length).toBeGreaterThan(0);
    const staffEmail = sandbox.school.users[0]!.email;
    const future = sandbox.school.sessions.filter((s) => s.start > Date.parse(sandbox.now()));
    await testClient(sandbox).updateSessions({
      email: staffEmail,
      sessions: future.slice(0, 5).map((s) => ({ id: s.id, title: `${s.title} (moved)` })),
    });

    const child = rostercal(['sync', '--full'], envFor(sandbox, ts));
    // Teams come before absences and sessions. Once the teams' first page is in, the upstream holds every request:
    // when one waits there, the run is provably mid-way (the sessions not yet listed whole, so not written), and
    // it is killed there, however slow the machine.
    await child.waitFor(/teams: page 1 of \d+/);
    const held = sandbox.hold();
    try {
      const waiting = await Promise.race([held.arrived(1).then(() => true), child.exit.then(() => false)]);
      expect(waiting, `the run ended before the upstream was held:\n${child.output()}`).toBe(true);
      child.proc.kill('SIGKILL');
      expect(await child.exit).toBeNull();
    } finally {
      held.release();
    }

    const reopened = await ts.reopen();
    try {
      const after = await snapshot(reopened, school.id);
      // Nothing of teams, absences or sessions was kept from the killed run; earlier resources were complete.
      expect(after.teams).toEqual(before.teams);
      expect(after.sessions).toEqual(before.sessions);
      expect(after.absences).toEqual(before.absences);
      expect(after.students).toEqual(before.students);
      const [killed] = await reopened.runs.listRuns(school.id, { limit: 1 });
      // Its process is gone: the run reads as interrupted at once, before anything closes it.
      expect(killed).toMatchObject({ kind: 'full', status: 'interrupted', finishedAt: null });

      const summary = await pullSchool({
        store: reopened,
        client: testClient(sandbox),
        school,
        kind: 'full',
      });
      expect(summary.status).toBe('succeeded');
      expect(summary.counts.sessions!.changed).toBe(5);
      const runs = await reopened.runs.listRuns(school.id, { limit: 2 });
      expect(runs[1]).toMatchObject({ id: killed!.id, status: 'interrupted' });
      expect(runs[1]!.finishedAt).not.toBeNull();
      expect(runs[1]!.errors.join(' ')).toMatch(/interrupted/);
      const moved = await reopened.records.get(school.id, 'sessions', future[0]!.id);
      expect(moved!.title).toMatch(/\(moved\)$/);
    } finally {
      await reopened.close();
    }
  });
});
