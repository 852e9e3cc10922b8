// Work that follows a pull in `rostercal sync` (and may follow scheduled pulls): the push module registers
// itself here, so the pull knows nothing about calendars and the CLI needs no change when pushing arrives.
import type { SchoolConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/types.ts';
import type { PullSummary } from './pull.ts';

export interface AfterPullContext {
  store: Store;
  school: SchoolConfig;
  summary: PullSummary;
  log: Logger;
  /** `rostercal sync` options the step may honour (`--dry-run` is the push module's). */
  flags: Record<string, string | boolean | undefined>;
  /** Prints a line of the step's progress or result for the person at the terminal. */
  print(line: string): void;
}

export interface AfterPullStep {
  name: string;
  /** CLI options the step adds to `rostercal sync`, in node:util parseArgs form, with their help text. */
  options?: Record<string, { type: 'boolean' | 'string'; help: string }>;
  /** false when the step failed: `rostercal sync` then exits non-zero. */
  run(ctx: AfterPullContext): Promise<boolean>;
}

const steps: AfterPullStep[] = [];

export function registerAfterPull(step: AfterPullStep): void {
  if (steps.some((s) => s.name === step.name))
    throw new Error(`after-pull step ${step.name} is registered twice`);
  steps.push(step);
}

export function afterPullSteps(): readonly AfterPullStep[] {
  return steps;
}
