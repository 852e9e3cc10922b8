// What the stages of one push run share (built once by run.ts): the store, the target, the provider, the run's
// clock, and where its problems and its calendars' outcomes are noted. Each stage takes the part it reads
// (`Pick<PushContext, …>`) and the previous stage's calendars, and returns calendars of its own type.
import type { Instant } from '../domain/types.ts';
import type { Logger } from '../log.ts';
import type { SchoolId, Store } from '../store/types.ts';
import type { PushProvider } from './provider.ts';
import type { CalendarOutcome } from './summary.ts';

export interface PushContext {
  store: Pick<Store, 'records' | 'push' | 'access'>;
  schoolId: SchoolId;
  targetId: string;
  provider: PushProvider;
  /** Plan only: read (store and remote listings), never write. */
  dryRun: boolean;
  /** The run's start: stamped on mappings and on a calendar created this run. */
  startedAt: Instant;
  clock: () => Date;
  log: Logger;
  /** Problems worth a line in the run's record. */
  note: (msg: string) => void;
  /** Writes per chunk between mapping saves. */
  chunkSize: number;
  /** How long a calendar rests after the provider said quota exceeded. */
  pauseMinutes: number;
  /**
   * A calendar's outcome as a stage reaches it. A stage that writes as it goes (ensure, list, apply) says so
   * after each calendar or chunk, so a run that fails half-way records what was done, as the pull's progress does.
   */
  reached: (outcome: Readonly<CalendarOutcome>) => void;
}
