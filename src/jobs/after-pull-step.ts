// Work that follows a pull: re-rendering feeds, pushing to calendars. The pull knows nothing about them; each
// composition root (`rostercal serve` in src/running-service.ts, `rostercal sync` in src/cli/sync.ts) lists the steps it
// runs, in order.
import type { SchoolConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/types.ts';
import type { PullSummary } from './pull-summary.ts';

export interface AfterPullContext {
  store: Store;
  school: SchoolConfig;
  summary: PullSummary;
  log: Logger;
  /** `rostercal sync` options the step may honour (`--dry-run` is the push step's). */
  flags: Record<string, string | boolean | undefined>;
  /** Prints a line of the step's progress or result for the person at the terminal. */
  print(line: string): void;
  /** The clock the pull ran on (serve's: SANDBOX_NOW against the sandbox, else the real one): a push after it
   * decides its window, which sessions are past and upcoming, on the same clock as the store it reads. */
  now: () => Date;
  /** DATA_DIR, where the feed rotation record is (a push's public calendars follow it). */
  dataDir?: string;
}

export interface AfterPullStep {
  name: string;
  /** CLI options the step adds to `rostercal sync`, in node:util parseArgs form, with their help text. */
  options?: Record<string, { type: 'boolean' | 'string'; help: string }>;
  /** false when the step failed: `rostercal sync` then exits non-zero. */
  run(ctx: AfterPullContext): Promise<boolean>;
}
