// `rostercal serve` against a sandbox whose school is built around TEST_NOW, with SANDBOX_NOW at the same instant:
// its pulls' window, "upcoming" and readiness are decided on that clock, so the test holds on any real date of the
// run. Before serve took one clock, its pulls asked for the 60 days before the real date onwards: run under
// libfaketime a year on (`faketime -f +400d npx vitest run test/running-service-clock.test.ts`), none of this
// school's sessions came back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { type RunningService, startService } from '../src/running-service.ts';
import { type Sandbox, startSandbox } from '../src/sandbox/index.ts';
import { openStore } from '../src/store/index.ts';
import { runCli } from './support/cli.ts';
import { TEST_NOW } from './support/clock.ts';
import { expectPdf } from './support/pdf.ts';
import { freePort } from './support/ports.ts';

const ADMIN_TOKEN = 'test-admin-token-clock-4f9c2b7e1a';
const DAY = 86_400_000;

describe('serve on the sandbox clock (SANDBOX_NOW)', () => {
  let sandbox: Sandbox;
  let service: RunningService;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 3, scale: 'small', now: TEST_NOW });
    dir = mkdtempSync(path.join(tmpdir(), 'rostercal-clock-'));
    const port = await freePort();
    env = {
      UPSTREAM_URL: sandbox.url,
      UPSTREAM_TOKEN: sandbox.token,
      SCHOOL_ID: 'hill',
      SCHOOL_NAME: 'Hillcrest College',
      SCHOOL_TZ: sandbox.school.timeZone,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dir,
      SANDBOX_NOW: TEST_NOW,
    };
    const config = await loadConfig(env);
    service = await startService({ config, port, host: '127.0.0.1', adminToken: ADMIN_TOKEN });
    await service.initialPulls;
  }, 120_000);

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The sandbox's sessions in the fortnight after TEST_NOW. */
  const fortnight = () => {
    const from = Date.parse(TEST_NOW);
    return sandbox.school.sessions.filter((s) => s.end > from && s.start < from + 14 * DAY);
  };
  const storedIn = async (store: Pick<RunningService['store'], 'records'>) =>
    (
      await store.records.listSessions('hill', {
        from: TEST_NOW,
        to: new Date(Date.parse(TEST_NOW) + 14 * DAY).toISOString(),
      })
    )
      .map((s) => s.id)
      .sort();

  it("pulls the sessions around the sandbox's now, and is ready", async () => {
    const ahead = fortnight();
    expect(ahead.length, 'the sandbox school has sessions in the fortnight after TEST_NOW').toBeGreaterThan(
      5,
    );
    expect(await storedIn(service.store)).toEqual(ahead.map((s) => s.id).sort());
    // The last pull's age is measured on the clock that stamped it.
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status, await ready.text()).toBe(200);
  });

  it("prints the attendance sheet of a team's next session after the sandbox's now", async () => {
    const from = Date.parse(TEST_NOW);
    const next = sandbox.school.sessions.find(
      (s) => s.start > from && !s.cancelled && !s.bye && s.teamIds.length,
    )!;
    const res = await fetch(`${service.url}/rosters/teams/${next.teamIds[0]}.pdf?template=attendance-sheet`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
    expectPdf(await res.arrayBuffer());
  });

  it("`rostercal roster` prints a team's next session after the sandbox's now", async () => {
    // The first session after TEST_NOW is in the past on the real date of any run after it: on the real clock the
    // command printed a later one.
    const from = Date.parse(TEST_NOW);
    const next = sandbox.school.sessions
      .filter((s) => s.start > from && !s.cancelled && !s.bye && s.teamIds.length)
      .sort((a, b) => a.start - b.start)[0]!;
    const team = next.teamIds[0]!;
    const teamNext = sandbox.school.sessions
      .filter((s) => s.end > from && !s.cancelled && s.teamIds.includes(team))
      .sort((a, b) => a.start - b.start || a.id - b.id)[0]!;
    const file = path.join(dir, 'next-session.pdf');
    const run = await runCli(
      ['roster', '--team', String(team), '--template', 'attendance-sheet', '-o', file],
      env,
    );
    expect(run.code, run.out).toBe(0);
    expect(run.out).toContain(`session ${teamNext.id} on `);
  }, 60_000);

  it('says the moved clock on /admin and in `rostercal status`', async () => {
    const said = `clock: SANDBOX_NOW=${new Date(TEST_NOW).toISOString()}: serve's "today" starts at that instant`;
    const res = await fetch(`${service.url}/admin`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(
      new RegExp(
        `<p id="service-clock"><strong>clock: SANDBOX_NOW=${new Date(TEST_NOW).toISOString()}: serve`,
      ),
    );
    const status = await runCli(['status'], env);
    expect(status.code, status.out).toBe(0);
    expect(status.out.split('\n')[0]).toContain(said);
  }, 60_000);

  it('`rostercal sync` pulls on the same clock', async () => {
    const data = mkdtempSync(path.join(tmpdir(), 'rostercal-clock-sync-'));
    try {
      const run = await runCli(['sync', '--full'], { ...env, DATA_DIR: data });
      expect(run.code, run.out).toBe(0);
      const store = await openStore({ dataDir: data });
      try {
        expect(await storedIn(store)).toEqual(
          fortnight()
            .map((s) => s.id)
            .sort(),
        );
      } finally {
        await store.close();
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  }, 120_000);
});
