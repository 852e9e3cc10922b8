// `rostercal sync` as a child process, pulling the sandbox over HTTP into a real SQLite store (a DATA_DIR of its own):
// the summary on stdout (or JSON, with progress kept to stderr), exit 1 naming the refusal when the upstream refuses
// the token (which is never printed), and usage errors that name the option.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { expectNoSecrets, runRostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

let sandbox: Sandbox;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ scale: 'small', seed: 12 });
  dir = mkdtempSync(join(tmpdir(), 'rostercal-sync-'));
  env = schoolEnv(sandbox, { DATA_DIR: dir });
});
afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('rostercal sync', () => {
  it("a first sync pulls the school in full, says what it wrote, and a --json one prints only the summary's JSON", async () => {
    const first = await runRostercal(['sync'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(
      /^Hillcrest College \[hillcrest\]: full pull succeeded \(first complete run: full\) in .* — run #1$/m,
    );
    expect(first.stdout).toMatch(/^\s*sessions\s+full\s+[1-9]\d*\s/m);
    expectNoSecrets(first.stdout + first.stderr, sandbox.token);

    const again = await runRostercal(['sync', '--full', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    const summary = JSON.parse(again.stdout) as { status: string; kind: string; schoolId: string };
    expect(summary).toMatchObject({ status: 'succeeded', kind: 'full', schoolId: 'hillcrest' });
    expectNoSecrets(again.stdout + again.stderr, sandbox.token);
  });

  it('a token the upstream refuses fails the sync (exit 1), naming the refusal and never the token', async () => {
    const wrong = 'not-the-token-0123456789';
    const r = await runRostercal(['sync'], { ...env, UPSTREAM_TOKEN: wrong });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /: incremental pull FAILED in .*\n[\s\S]*problem: teams: UPSTREAM_TOKEN was refused by the upstream service/,
    );
    expectNoSecrets(r.stdout + r.stderr, wrong);
    // The upstream's own words stay whole, the credential's place marked: not "(Authorization: Bearer ))".
    expect(r.stdout).toContain('(Authorization: Bearer [redacted])');
    expect(r.stdout).not.toContain('Bearer )');
  });

  it('an unknown --school or a bad --wait is a usage error (exit 2) naming it, and pulls nothing', async () => {
    const before = sandbox.stats().total;
    const school = await runRostercal(['sync', '--school', 'nowhere'], env);
    expect(school.code).toBe(2);
    expect(school.stderr).toContain('no school "nowhere" in the configuration (known: hillcrest)');
    const wait = await runRostercal(['sync', '--wait', 'soon'], env);
    expect(wait.code).toBe(2);
    expect(wait.stderr).toContain('--wait');
    expect(sandbox.stats().total).toBe(before);
  });
});
