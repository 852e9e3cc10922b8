// `rostercal serve` as families and attackers meet it: a sandbox school pulled by `rostercal sync`, its feed URLs
// from `rostercal feeds list --json`, then the real server as a child process with its pino log captured.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, schoolEnv } from '../support/cli.ts';

export const ADMIN_TOKEN = 'admin-token-for-privacy-tests-0123456789';

export interface PrivacySchool {
  sandbox: Sandbox;
  env: Record<string, string>;
  dataDir: string;
  /** Feed URLs by scope, as `feeds list --json` printed them. */
  feeds: { scope: string; id: number; url: string; page: string }[];
  close(): Promise<void>;
}

export interface Served {
  url: string;
  child: Child;
  /** Stops the server (SIGTERM) and resolves with everything it wrote. */
  stop(): Promise<string>;
}

/** A pulled sandbox school in its own DATA_DIR. */
export async function privacySchool(seed = 31): Promise<PrivacySchool> {
  const sandbox = await startSandbox({ seed, scale: 'small' });
  const dataDir = await mkdtemp(path.join(tmpdir(), 'rostercal-privacy-'));
  const env = { ...schoolEnv(sandbox, { DATA_DIR: dataDir }), ADMIN_TOKEN };
  const sync = rostercal(['sync', '--full'], env);
  if ((await sync.exit) !== 0) throw new Error(`rostercal sync failed:\n${sync.output()}`);
  const list = rostercal(['feeds', 'list', '--json'], env);
  if ((await list.exit) !== 0) throw new Error(`rostercal feeds list failed:\n${list.output()}`);
  const feeds = JSON.parse(list.stdout()) as PrivacySchool['feeds'];
  return {
    sandbox,
    env,
    dataDir,
    feeds,
    async close() {
      await sandbox.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** `rostercal serve --port 0` with the given extra environment, logging at info. */
export async function serve(school: PrivacySchool, env: Record<string, string> = {}): Promise<Served> {
  const child = rostercal(['serve', '--port', '0'], { ...school.env, LOG_LEVEL: 'info', ...env });
  await child.waitFor(/rostercal is serving \d+ school\(s\) on http:\/\/\S+/);
  const url = /rostercal is serving \d+ school\(s\) on (http:\/\/\S+)/.exec(child.output())![1]!;
  return {
    url,
    child,
    async stop() {
      child.proc.kill('SIGTERM');
      await child.exit;
      return child.output();
    },
  };
}

/** The token of a feed URL (`…/feeds/<token>.ics`). */
export function tokenOf(url: string): string {
  return /\/feeds\/([A-Za-z0-9_-]{32})/.exec(url)![1]!;
}
