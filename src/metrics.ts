// Prometheus metrics for /metrics. One Metrics object per process (createMetrics); the web layer counts
// requests and feed renders, and the sync side reports each finished run through observeSyncRun (or increments
// the counters directly). Labels stay low-cardinality: route names, never paths or tokens.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { FeedScope, SyncRun } from './store/types.ts';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'route' | 'method' | 'status'>;
  httpDuration: Histogram<'route' | 'method'>;
  feedRenders: Counter<'scope'>;
  feedRenderSeconds: Histogram<'scope'>;
  feedsTrimmed: Counter<'scope'>;
  feedRenderPasses: Gauge<'state'>;
  rateLimited: Counter<'route'>;
  syncRuns: Counter<'school' | 'kind' | 'status'>;
  syncLastSuccess: Gauge<'school' | 'kind'>;
  upstreamRequests: Counter<'school'>;
  upstreamThrottled: Counter<'school'>;
  upstreamRetries: Counter<'school'>;
  /** Counts one finished sync run: its status, its upstream requests, retries and 429s. */
  observeSyncRun(
    run: Pick<
      SyncRun,
      'schoolId' | 'kind' | 'status' | 'finishedAt' | 'upstreamRequests' | 'throttled' | 'retries'
    >,
  ): void;
  /** Counts one feed render (FeedService's onRender). */
  observeFeedRender(info: { scope: FeedScope; ms: number; trimmed: number }): void;
  /** The feed re-render passes under way and waiting for a worker (the school renderer's onLoad). */
  observeRenderLoad(load: { running: number; waiting: number }): void;
  /** Counts a render worker thread started (the school renderer's onWorkerStart). */
  feedRenderThreads: Counter;
}

export function createMetrics(opts: { registry?: Registry; defaultMetrics?: boolean } = {}): Metrics {
  const registry = opts.registry ?? new Registry();
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: 'rostercal_' });
  const registers = [registry];
  const m = {
    registry,
    httpRequests: new Counter({
      name: 'rostercal_http_requests_total',
      help: 'HTTP requests by route, method and status',
      labelNames: ['route', 'method', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'rostercal_http_request_duration_seconds',
      help: 'HTTP request duration by route',
      labelNames: ['route', 'method'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    feedRenders: new Counter({
      name: 'rostercal_feed_renders_total',
      help: 'ICS feed renders by scope',
      labelNames: ['scope'] as const,
      registers,
    }),
    feedRenderSeconds: new Histogram({
      name: 'rostercal_feed_render_seconds',
      help: 'Time to render and compress one feed',
      labelNames: ['scope'] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    feedsTrimmed: new Counter({
      name: 'rostercal_feed_renders_trimmed_total',
      help: 'Feed renders that left out far-future events to stay under the size limit',
      labelNames: ['scope'] as const,
      registers,
    }),
    feedRenderPasses: new Gauge({
      name: 'rostercal_feed_render_passes',
      help: 'Feed re-render passes of this process: running, or waiting for a render worker',
      labelNames: ['state'] as const,
      registers,
    }),
    feedRenderThreads: new Counter({
      name: 'rostercal_feed_render_threads_started_total',
      help: 'Render worker threads started: each serves passes until it has been idle for a while',
      registers,
    }),
    rateLimited: new Counter({
      name: 'rostercal_http_rate_limited_total',
      help: 'Requests refused by the per-IP rate limit',
      labelNames: ['route'] as const,
      registers,
    }),
    syncRuns: new Counter({
      name: 'rostercal_sync_runs_total',
      help: 'Finished sync runs by school, kind and status',
      labelNames: ['school', 'kind', 'status'] as const,
      registers,
    }),
    syncLastSuccess: new Gauge({
      name: 'rostercal_sync_last_success_timestamp_seconds',
      help: 'When the last successful sync run of a kind finished',
      labelNames: ['school', 'kind'] as const,
      registers,
    }),
    upstreamRequests: new Counter({
      name: 'rostercal_upstream_requests_total',
      help: 'Requests sent to the Extracurricular Data Service',
      labelNames: ['school'] as const,
      registers,
    }),
    upstreamThrottled: new Counter({
      name: 'rostercal_upstream_throttled_total',
      help: '429 responses from the Extracurricular Data Service',
      labelNames: ['school'] as const,
      registers,
    }),
    upstreamRetries: new Counter({
      name: 'rostercal_upstream_retries_total',
      help: 'Retried upstream requests',
      labelNames: ['school'] as const,
      registers,
    }),
  };
  return {
    ...m,
    observeSyncRun(run) {
      m.syncRuns.inc({ school: run.schoolId, kind: run.kind, status: run.status });
      if (run.status === 'succeeded' && run.finishedAt) {
        m.syncLastSuccess.set({ school: run.schoolId, kind: run.kind }, Date.parse(run.finishedAt) / 1000);
      }
      if (run.upstreamRequests > 0) m.upstreamRequests.inc({ school: run.schoolId }, run.upstreamRequests);
      if (run.throttled > 0) m.upstreamThrottled.inc({ school: run.schoolId }, run.throttled);
      if (run.retries > 0) m.upstreamRetries.inc({ school: run.schoolId }, run.retries);
    },
    observeFeedRender(info) {
      m.feedRenders.inc({ scope: info.scope });
      m.feedRenderSeconds.observe({ scope: info.scope }, info.ms / 1000);
      if (info.trimmed > 0) m.feedsTrimmed.inc({ scope: info.scope });
    },
    observeRenderLoad(load) {
      m.feedRenderPasses.set({ state: 'running' }, load.running);
      m.feedRenderPasses.set({ state: 'waiting' }, load.waiting);
    },
  };
}
