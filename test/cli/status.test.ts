// `rostercal status` as a child process, on the SQLite store a real `rostercal sync` filled from the sandbox over
// HTTP: the school, its runs and jobs in the school's time zone, --json, and usage errors that name the option.
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecrets, runRostercal } from '../support/cli.ts';
import { type PulledSchool, schoolPulledByCli } from '../support/pulled-school.ts';

let school: PulledSchool;

beforeAll(async () => {
  school = await schoolPulledByCli({ seed: 11, dirPrefix: 'rostercal-status-' });
}, 120_000);
afterAll(async () => {
  await school?.close();
});

describe('rostercal status', () => {
  it("prints the school, no jobs yet, and the sync's run in school time, with no credential", async () => {
    const r = await runRostercal(['status'], school.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('Hillcrest College [hillcrest] — times in Australia/Sydney');
    expect(r.stdout).toContain('jobs: none recorded yet');
    const run = lines.find((l) => l.trim().startsWith('#1'));
    expect(run).toMatch(
      /#1\s+full\s+succeeded\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d AE[DS]T\s+[\d.]+ s\s+\d+\s+\+\d+ ~0 -0/,
    );
    expectNoSecrets(r.stdout, school.sandbox.token);
  });

  it('--json gives the one school as an object; --runs limits its runs', async () => {
    await runRostercal(['sync'], school.env);
    const r = await runRostercal(['status', '--json', '--runs', '1'], school.env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      id: string;
      timeZone: string;
      runs: { id: number; kind: string }[];
    };
    expect(report.id).toBe('hillcrest');
    expect(report.timeZone).toBe('Australia/Sydney');
    expect(report.runs.map((x) => [x.id, x.kind])).toEqual([[2, 'incremental']]);
    expectNoSecrets(r.stdout, school.sandbox.token);
  });

  it('an unknown --school or a bad --runs is a usage error (exit 2) naming it', async () => {
    const unknown = await runRostercal(['status', '--school', 'nowhere'], school.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no school "nowhere" (known: hillcrest)');
    expect(unknown.stdout).toBe('');
    const runs = await runRostercal(['status', '--runs', '0'], school.env);
    expect(runs.code).toBe(2);
    expect(runs.stderr).toContain('--runs must be a whole number ≥ 1, got "0"');
  });

  it('a database that cuts the connection is named (host, port, database; never the password), exit 1', async () => {
    // A server that takes the connection and ends it once the client speaks: pg's "Connection terminated
    // unexpectedly", which alone does not say what was being reached.
    const cut = createServer((socket) => socket.once('data', () => socket.destroy()));
    cut.listen(0, '127.0.0.1');
    await once(cut, 'listening');
    const { port } = cut.address() as { port: number };
    try {
      const url = `postgres://rostercal:s3cret-pw@127.0.0.1:${port}/rostercal`;
      const r = await runRostercal(['status'], { ...school.env, DATABASE_URL: url });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(
        `rostercal status: the database (PostgreSQL at 127.0.0.1:${port}/rostercal)`,
      );
      expect(r.stderr).not.toContain('s3cret-pw');
      expect(r.stderr).not.toContain(url);
      expectNoSecrets(r.stdout + r.stderr, 's3cret-pw');
    } finally {
      cut.close();
    }
  });
});
