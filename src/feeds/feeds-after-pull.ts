// Feeds after a pull: bring the school's issued feeds to the new data version (rendering only those whose inputs
// changed; a pull that changed nothing touches none), so the next request is a lookup, and count the run in the
// metrics. `rostercal serve` renders inside the pull, before its run is recorded (storeFeedsOf), so that a pull
// whose feeds could not be stored is not recorded as a success; its after-pull step only counts. A separate
// `rostercal sync` process needs neither: the server notices the new data version on the next request and
// renders then.

import type { AfterPullStep } from '../jobs/after-pull-step.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { SchoolId } from '../store/types.ts';
import type { SchoolRenderer } from './school-renderer.ts';
import type { RenderSchoolResult } from './school-rerender.ts';

/** The one log line of a finished re-render pass, whichever step ran it (tests and operators read it). */
function logRendered(log: Logger, schoolId: SchoolId, r: RenderSchoolResult): void {
  if (r.skipped) {
    log.debug({ school: schoolId, dataVersion: r.dataVersion }, 'feeds already current: no re-render pass');
    return;
  }
  log.info(
    {
      school: schoolId,
      feeds: r.feeds,
      rendered: r.rendered,
      unchanged: r.unchanged,
      ms: Math.round(r.ms),
      dataVersion: r.dataVersion,
    },
    'feeds re-rendered',
  );
}

export function feedsAfterPull(opts: {
  /** Absent when the pull renders them itself before its run is recorded (serve: storeFeedsOf). */
  feeds?: Pick<SchoolRenderer, 'renderSchool'>;
  metrics?: Metrics;
}): AfterPullStep {
  return {
    name: 'feeds',
    async run(ctx) {
      const s = ctx.summary;
      opts.metrics?.observeSyncRun({
        schoolId: s.schoolId,
        kind: s.kind,
        status: s.status,
        finishedAt: s.finishedAt,
        upstreamRequests: s.upstream.requests,
        retries: s.upstream.retries,
        throttled: s.upstream.throttled,
      });
      if (s.status === 'failed' || !opts.feeds) return true;
      try {
        const r = await opts.feeds.renderSchool(ctx.school.id);
        logRendered(ctx.log, ctx.school.id, r);
        return true;
      } catch (err) {
        ctx.log.error({ school: ctx.school.id, err: (err as Error).message }, 'feed re-render failed');
        return false;
      }
    },
  };
}

/**
 * A pull's storeOutputs for serve: re-renders the school's issued feeds and stores them before the run is
 * recorded, so that a pull whose feeds could not be stored (a full disk, a read-only store) is recorded failed,
 * never succeeded. Requests meanwhile are answered from memory (FeedService.get).
 */
export function storeFeedsOf(opts: {
  feeds: Pick<SchoolRenderer, 'renderSchool'>;
  log: Logger;
  /** Told how each pass went: null when it stored every render it made, else why not. */
  onStored?: (err: unknown) => void;
}): (schoolId: SchoolId) => Promise<void> {
  return async (schoolId) => {
    try {
      const r = await opts.feeds.renderSchool(schoolId);
      opts.onStored?.(null);
      logRendered(opts.log, schoolId, r);
    } catch (err) {
      const message = (err as Error).message;
      opts.log.error({ school: schoolId, reason: message }, 'feed re-render failed');
      opts.onStored?.(err);
      throw new Error(`feeds: the re-rendered feeds could not be stored: ${message}`);
    }
  };
}
