// People read times in the school's zone: `rostercal status` and `rostercal sessions`, run for real, print
// school-local times with the zone's abbreviation, never bare UTC. (--json keeps ISO instants for machines.)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

/** The school-local wall clock as `YYYY-MM-DD HH:MM`, from Intl (not from the code under test). */
function sydney(iso: string): { clock: string; abbr: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-AU', {
      timeZone: 'Australia/Sydney',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'short',
    })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return {
    clock: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`,
    abbr: String(parts.timeZoneName),
  };
}

async function run(args: string[], env: Record<string, string>) {
  const child = rostercal(args, env);
  const code = await child.exit;
  return { code, stdout: child.stdout(), output: child.output() };
}

describe('times people read are in the school’s zone', () => {
  let sandbox: Sandbox;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
    dir = mkdtempSync(join(tmpdir(), 'rostercal-times-'));
    env = schoolEnv(sandbox, { DATA_DIR: dir });
    const pulled = await run(['sync'], env);
    expect(pulled.code, pulled.output).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('status: run start times in Australia/Sydney with AEST/AEDT, no UTC instants', async () => {
    const json = await run(['status', '--json'], env);
    const startedAt = JSON.parse(json.stdout).runs[0].startedAt as string;
    const r = await run(['status'], env);
    expect(r.code, r.output).toBe(0);
    const { clock, abbr } = sydney(startedAt);
    expect(abbr).toMatch(/^AE[SD]T$/);
    expect(r.stdout).toMatch(new RegExp(`#\\d+ +full +succeeded +${clock}:\\d\\d ${abbr}`));
    expect(r.stdout).toContain('Australia/Sydney');
    expect(r.stdout).not.toMatch(/\d\d:\d\d:\d\dZ/);
  });

  it('sessions: each time carries the zone abbreviation', async () => {
    const team = sandbox.school.teams.find((t) => !t.hidden)!;
    const json = await run(['sessions', '--team', String(team.id), '--days', '365', '--json'], env);
    const rows = JSON.parse(json.stdout).sessions as { id: number; start: string }[];
    expect(rows.length).toBeGreaterThan(0);
    const r = await run(['sessions', '--team', String(team.id), '--days', '365'], env);
    const first = rows[0]!;
    const { clock, abbr } = sydney(first.start);
    const line = r.stdout.split('\n').find((l) => l.startsWith(`${first.id} `));
    expect(line, r.stdout).toContain(`${clock.slice(11)}–`);
    expect(line).toMatch(new RegExp(`\\d\\d:\\d\\d ${abbr}\\b`));
  });
});
