// The step `rostercal serve` runs first after each pull (src/running-service.ts lists its steps):
// count the run in the metrics and bring the school's issued feeds to the new data version (rendering only those
// whose inputs changed; a pull that changed nothing touches none), so the next
// request is a lookup. A separate `rostercal sync` process needs no such step: the server notices the new
// data version on the next request and renders then.
import type { AfterPullStep } from '../sync/after-pull.ts';
import type { Metrics } from '../web/metrics.ts';
import type { SchoolRenderer } from './school-renderer.ts';

export function feedsAfterPull(opts: {
  feeds: Pick<SchoolRenderer, 'renderSchool'>;
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
      if (s.status === 'failed') return true;
      try {
        const r = await opts.feeds.renderSchool(ctx.school.id);
        ctx.log.info(
          {
            school: ctx.school.id,
            feeds: r.feeds,
            rendered: r.rendered,
            unchanged: r.unchanged,
            ms: Math.round(r.ms),
            dataVersion: r.dataVersion,
          },
          'feeds re-rendered',
        );
        return true;
      } catch (err) {
        ctx.log.error({ school: ctx.school.id, err: (err as Error).message }, 'feed re-render failed');
        return false;
      }
    },
  };
}
