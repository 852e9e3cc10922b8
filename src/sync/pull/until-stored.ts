// What a pull must still write after its work is over (the release of its school, its run's end). A store out of
// reach at that moment (a 2-s network cut) left it undone for as long as the process lived: the school's lease held
// by a live owner, so every later pull was refused as "already running", and its run `running` in status and
// /admin (an outside tester's report, issue 45). Asked again in the background until the store takes it.
import type { Logger } from '../../log.ts';
import { backoffDelay } from '../../util/retry.ts';

/** The project's one schedule (util/retry.ts): 0.5 s, doubling, at most 15 s. */
const SCHEDULE = { baseMs: 500, capMs: 15_000 };
/** A store still refusing after this is gone for good (closed, its process stopping): said once, and let be. */
const GIVE_UP_MS = 3_600_000;

/**
 * Runs `attempt`; if the store refuses it, logs `could not <what>` once and asks again in the background, backing
 * off to 15 s, until it is done (then `settled`). Resolves after the first attempt, whatever its outcome:
 * the pull's own end does not wait for the database to come back.
 */
export async function untilStored(
  what: string,
  attempt: () => Promise<void>,
  log: Logger,
  opts: { bindings?: Record<string, unknown>; settled?: () => void } = {},
): Promise<void> {
  const { bindings = {}, settled = () => {} } = opts;
  try {
    await attempt();
    return settled();
  } catch (err) {
    log.error({ err, ...bindings, retrying: true }, `could not ${what}`);
  }
  const started = Date.now();
  const again = (retry: number) => {
    const timer = setTimeout(
      () => {
        attempt().then(
          () => {
            log.info(bindings, `${what}: done once the store answered`);
            settled();
          },
          (err: unknown) => {
            if (Date.now() - started < GIVE_UP_MS) return again(retry + 1);
            log.error({ err, ...bindings }, `could not ${what}; gave up after an hour`);
            settled();
          },
        );
      },
      backoffDelay(SCHEDULE, retry),
    );
    timer.unref();
  };
  again(0);
}
