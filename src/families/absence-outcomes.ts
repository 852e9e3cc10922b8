// What a family is told after "Can't make it?" or its Undo: the outcomes of an act and their words. A report and
// an undo have words of their own; "nothing was reported" is said only where the upstream refused the write or
// was never reached (a write whose answer was lost is "could not confirm", never "nothing").
import type { Id } from '../domain/types.ts';
import { ForbiddenError, RateLimitedError, UpstreamError } from '../upstream/errors.ts';

export type Outcome =
  | {
      ok: true;
      /**
       * reported / already-reported: it stands upstream; pending: another request is sending it now; unconfirmed:
       * sent, but the answer was lost (read back within a minute); withdrawn / already-withdrawn: undone;
       * undo-unconfirmed: the undo was sent but its answer lost; unsettled: an earlier request for it ended without
       * recording what came of it (it may or may not have been sent), and it was not found upstream: the settle step
       * decides.
       */
      kind:
        | 'reported'
        | 'already-reported'
        | 'pending'
        | 'unconfirmed'
        | 'unsettled'
        | 'withdrawn'
        | 'already-withdrawn'
        | 'undo-unconfirmed';
      sessionId: Id | null;
    }
  | { ok: false; status: number; message: string; retryAfterS?: number };

export type Act = 'report' | 'undo';

export function refuse(status: number, message: string): Outcome {
  return { ok: false, status, message };
}

export function tooMany(waitS: number): Outcome {
  const minutes = Math.max(1, Math.ceil(waitS / 60));
  return {
    ok: false,
    status: 429,
    retryAfterS: waitS,
    message: `Too many absence reports from this connection. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}, or tell the coach directly.`,
  };
}

/** The store could not record the act: it was not sent (an act nobody could audit is not made). */
export function notRecorded(act: Act): Outcome {
  return refuse(
    503,
    act === 'report'
      ? 'This calendar could not record the report just now, so nothing was reported. Please try again in a few minutes, or tell the coach directly.'
      : 'This calendar could not record the undo just now, so the absence still stands. Please try again in a few minutes, or tell the coach directly.',
  );
}

/** The child's report is being undone right now (another tap, another device). */
export const BEING_UNDONE = refuse(
  409,
  'That absence is being undone right now: this page will show where it stands within a minute.',
);

const NOT_DONE: Record<Act, string> = {
  report: 'so nothing was reported',
  undo: 'so nothing was undone: the absence still stands',
};

/**
 * An act the upstream refused or never took (a 403 hides the option everywhere: `onForbidden`). Only for
 * failures after which nothing was written: a read before the write, or a write refused or never reached.
 */
export function notMade(act: Act, err: unknown): { outcome: Outcome; why: string; forbidden: boolean } {
  if (!(err instanceof UpstreamError)) throw err;
  const why = `upstream ${err.status ?? 'unreachable'} on ${err.endpoint}`;
  const tell =
    act === 'report' ? 'Please tell the coach or the school office directly.' : 'Please tell the coach.';
  if (err instanceof ForbiddenError)
    return {
      why,
      forbidden: true,
      outcome: refuse(
        502,
        `The school\u2019s system does not let this calendar record absences, ${NOT_DONE[act]}. ${tell}`,
      ),
    };
  if (err instanceof RateLimitedError)
    return {
      why,
      forbidden: false,
      outcome: refuse(
        503,
        `The school\u2019s system is busy just now, ${NOT_DONE[act]}. Try again in a few minutes, or tell the coach directly.`,
      ),
    };
  if (err.status === null || err.retryable)
    return {
      why,
      forbidden: false,
      outcome: refuse(
        err.status === null ? 503 : 502,
        `The school\u2019s system could not be reached, ${NOT_DONE[act]}. Try again in a few minutes, or tell the coach directly.`,
      ),
    };
  return {
    why,
    forbidden: false,
    outcome: refuse(
      502,
      `The school\u2019s system refused the ${act === 'report' ? 'report' : 'undo'} (it answered ${err.status}), ${NOT_DONE[act]}. ${tell}`,
    ),
  };
}

export function limitReached(max: number, label: string): Outcome {
  return refuse(
    429,
    `${max} absences have been reported for ${label} in the last 24 hours, the most this calendar takes. Please tell the coach or the school office directly.`,
  );
}
