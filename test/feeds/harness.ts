// End-to-end fixture: sandbox over HTTP → upstream client → pull → SQLite store → feeds → web app.
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { parseConfig, type SchoolConfig } from '../../src/config.ts';
import { FamilyAbsences } from '../../src/families/absences.ts';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { FeedTokens } from '../../src/feeds/tokens.ts';
import type { PullSummary } from '../../src/jobs/pull-summary.ts';
import { createMetrics, type Metrics } from '../../src/metrics.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { createApp } from '../../src/web/app.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { TEST_NOW } from '../support/clock.ts';

export const SECRET = Buffer.from('test-feed-secret-0123456789abcdefghijklmnop');

export interface Harness {
  sandbox: Sandbox;
  store: Store;
  client: UpstreamClient;
  school: SchoolConfig;
  feeds: FeedService;
  tokens: FeedTokens;
  metrics: Metrics;
  dir: string;
  /** Pulls the school (or the same school with other settings, e.g. sensitive rosters on); throws if it fails. */
  pull(kind?: 'full' | 'incremental', as?: SchoolConfig): Promise<PullSummary>;
  serve(opts?: {
    publicUrl?: string;
    feedRateLimit?: { perSecond: number; burst: number } | false;
    /** METRICS_TOKEN: /metrics answers a request bearing it (unset: no /metrics on this app). */
    metricsToken?: string;
    /** Families' "Can't make it?" on child and family pages (see `familyAbsences`). */
    absences?: FamilyAbsences;
  }): Promise<RunningServer>;
  close(): Promise<void>;
}

export async function startHarness(
  opts: { scale?: 'small' | 'school'; now?: string; seed?: number } = {},
): Promise<Harness> {
  // The product is given the sandbox's clock wherever it takes one (pull, feeds, web), so the pin holds end to end.
  const sandbox = await startSandbox({
    seed: opts.seed ?? 7,
    scale: opts.scale ?? 'small',
    now: opts.now ?? TEST_NOW,
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-feeds-'));
  const store = await openStore({ file: path.join(dir, 'rostercal.sqlite') });
  const school = parseConfig({
    schools: [
      {
        id: 'hill',
        name: 'Hillcrest College',
        upstream: { url: sandbox.url, token: sandbox.token },
        timeZone: sandbox.school.timeZone,
      },
    ],
  }).schools[0]!;
  const client = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
  const metrics = createMetrics({ defaultMetrics: false });
  const now = () => new Date(sandbox.now());
  // dataVersionTtlMs 0: h.pull() is pullSchool alone, without serve's after-pull step that re-renders with a fresh
  // data version; with the 1 s default a feed read right after h.pull() would be up to 1 s stale (docs/test-overrides.md).
  const feeds = new FeedService({ store, now, dataVersionTtlMs: 0, onRender: metrics.observeFeedRender });
  const tokens = new FeedTokens(store, SECRET);
  const servers: RunningServer[] = [];
  const h: Harness = {
    sandbox,
    store,
    client,
    school,
    feeds,
    tokens,
    metrics,
    dir,
    async pull(kind = 'full', as = school) {
      const summary = await pullSchool({ store, client, school: as, kind, now });
      if (summary.status === 'failed') throw new Error(`pull failed: ${summary.errors.join('; ')}`);
      return summary;
    },
    async serve(o = {}) {
      const app = createApp({
        store,
        feeds,
        metrics,
        publicUrl: o.publicUrl ?? 'https://cal.example.org',
        logger: pino({ level: 'silent' }),
        now,
        feedRateLimit: o.feedRateLimit ?? false,
        metricsToken: o.metricsToken ?? null,
        ...(o.absences ? { absences: o.absences } : {}),
      });
      const running = await startServer(app, { port: 0, host: '127.0.0.1' });
      servers.push(running);
      return running;
    },
    async close() {
      for (const s of servers) await s.close(1000);
      // A test may have closed the sandbox itself (the school's system away): closed is what is wanted.
      await sandbox.close().catch((err: unknown) => {
        if ((err as { code?: string }).code !== 'ERR_SERVER_NOT_RUNNING') throw err;
      });
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await h.pull('full');
  return h;
}

/** What a request over `httpCall` got back. */
export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * One request to a harness's server on a connection of its own (no kept-alive socket outlives the test); a `form`
 * is posted URL-encoded. Unlike fetch, it sends the URL and headers exactly as given and follows no redirect.
 */
export function httpCall(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    form?: Record<string, string>;
    body?: string;
  } = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const body = opts.form ? new URLSearchParams(opts.form).toString() : opts.body;
    const req = httpRequest(
      url,
      {
        method: opts.method ?? (body !== undefined ? 'POST' : 'GET'),
        agent: false,
        headers: {
          ...(body !== undefined ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Families' "Can't make it?" for the harness's school, written to its sandbox on the sandbox's clock. Every request
 * of a test comes from 127.0.0.1, so the per-address limit is raised past what one test file asks.
 */
export function familyAbsences(h: Harness): FamilyAbsences {
  const families = { ...h.school.families, reportAbsences: true, actsPerAddressPerHour: 1000 };
  return new FamilyAbsences({
    store: h.store,
    schools: [{ ...h.school, families }],
    clientFor: () => h.client,
    now: () => new Date(h.sandbox.now()),
  });
}
