// A sandbox school pulled once by the real `rostercal sync`, in its own DATA_DIR: the starting point of tests that
// then run other commands (or `serve`) against what a first sync left. The CLI runs on the real clock, so the
// school is built around this week (startWeekSandbox), not around the day the test happens to run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from './cli.ts';
import { startWeekSandbox } from './clock.ts';

export interface PulledSchool {
  sandbox: Sandbox;
  /** The DATA_DIR the sync wrote. */
  dir: string;
  /** The environment that names the school and its store, for further commands. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Starts a sandbox (`small` unless told) and runs `rostercal sync` once against it; throws with its output if it fails. */
export async function schoolPulledByCli(
  opts: Omit<SandboxOptions, 'now'> & { seed: number; args?: string[]; dirPrefix?: string },
): Promise<PulledSchool> {
  const { args = ['sync'], dirPrefix = 'rostercal-pulled-', ...sandboxOpts } = opts;
  const sandbox = await startWeekSandbox({ scale: 'small', ...sandboxOpts });
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const close = async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const env = schoolEnv(sandbox, { DATA_DIR: dir });
  const sync = rostercal(args, env);
  if ((await sync.exit) !== 0) {
    await close();
    throw new Error(`rostercal ${args.join(' ')} failed:\n${sync.output()}`);
  }
  return { sandbox, dir, env, close };
}
