// `rostercal serve` as families and attackers meet it: a sandbox school pulled by `rostercal sync`, its feed URLs
// from `rostercal feeds list --json`, then the real server as a child process with its pino log captured.
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal } from '../support/cli.ts';
import { schoolPulledByCli } from '../support/pulled-school.ts';

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

/** A pulled sandbox school in its own DATA_DIR (built around this week: serve and sync run on the real clock). */
export async function privacySchool(seed = 31): Promise<PrivacySchool> {
  const pulled = await schoolPulledByCli({ seed, args: ['sync', '--full'], dirPrefix: 'rostercal-privacy-' });
  const env = { ...pulled.env, ADMIN_TOKEN };
  const list = rostercal(['feeds', 'list', '--json'], env);
  if ((await list.exit) !== 0) {
    await pulled.close();
    throw new Error(`rostercal feeds list failed:\n${list.output()}`);
  }
  const feeds = JSON.parse(list.stdout()) as PrivacySchool['feeds'];
  return { sandbox: pulled.sandbox, env, dataDir: pulled.dir, feeds, close: pulled.close };
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
