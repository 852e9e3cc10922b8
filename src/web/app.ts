// The Express app: feeds, health, metrics (with their token), and mount points for the rosters and admin routers.
// `rostercal serve` builds it with createApp and runs it with startServer (server.ts).
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import type { FamilyAbsences } from '../families/absences.ts';
import { type FamilyFeeds, FamilyLinks } from '../feeds/family.ts';
import { FeedTokenResolver } from '../feeds/tokens.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { FeedToken, Store } from '../store/types.ts';
import { absenceRouter } from './absence-router.ts';
import { errorHandler, formBodiesOnly, isStaffPath, redactPath, staffNotFound } from './errors.ts';
import { familyRouter } from './family-router.ts';
import { type FeedRouterOptions, feedsRouter, notFound } from './feeds-router.ts';
import { healthRoutes, type ReadinessOptions } from './health.ts';
import { metricsRoute } from './metrics-access.ts';
import { FailedLookups, type RateLimitOptions, rateLimit } from './rate-limit.ts';
import { securityHeaderPairs, securityHeaders, setSecurityHeaders } from './security.ts';

export interface AppOptions {
  store: Pick<Store, 'records' | 'runs' | 'feeds' | 'links' | 'ping'>;
  /** What the feed, family and absence routers read of the feed service. */
  feeds: FeedRouterOptions['feeds'] & FamilyFeeds;
  metrics: Metrics;
  /**
   * METRICS_TOKEN: /metrics on this app answers a request bearing it. Unset, this app has no /metrics (serve then
   * offers it on METRICS_PORT only): its counts are not the families' business.
   */
  metricsToken?: string | null;
  /** Absolute base URL for links (PUBLIC_URL), e.g. `https://calendars.school.org`. */
  publicUrl: string;
  /** serve's logger (log.ts: secrets censored and scrubbed); there is no bare fallback. */
  logger: Logger;
  /**
   * A per-client limit on every /feeds and /family request (feedRateLimit / FEED_RATE_LIMIT). Default none:
   * valid feed requests are not throttled (rate-limit.ts says why).
   */
  feedRateLimit?: Pick<RateLimitOptions, 'perSecond' | 'burst'> | false;
  /** Lookups of unknown, malformed or revoked tokens per client before they answer 429. Default 60, 1/s. */
  failedLookupLimit?: Pick<RateLimitOptions, 'perSecond' | 'burst'> | false;
  readiness?: ReadinessOptions;
  /** Express `trust proxy` (TRUST_PROXY: set behind a reverse proxy so req.ip is the client's). */
  trustProxy?: number | string;
  /** Extra routers by mount path, e.g. `{ '/rosters': rostersRouter, '/admin': adminRouter }`. */
  routers?: Record<string, Router>;
  /** Cache-Control of calendar responses. Default `private, max-age=300`. */
  feedCacheControl?: string;
  /** Landing pages: the live Google calendar of a feed's subject (feeds-router.ts), and demo mode (QR). */
  liveGoogleCalendar?: FeedRouterOptions['liveGoogleCalendar'];
  demo?: boolean;
  /** The clock of landing pages ("updated 5 minutes ago"). */
  now?: () => Date;
  /** Feed rotations: whether this process can vouch for a feed URL, and why not (for /readyz). */
  feedGuard?: {
    vouchesFor(record: FeedToken | null): Promise<boolean>;
    problems(): Promise<ReadonlyMap<string, string>>;
  };
  /** Families' "can't make it" (src/families/absences.ts): offered on child and family pages where it is on. */
  absences?: FamilyAbsences;
}

function requestObserver(metrics: Metrics, logger: Logger) {
  return function observe(req: Request, res: Response, next: NextFunction) {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route: string =
        res.locals.route ?? (req.route?.path ? `${req.baseUrl}${req.route.path}` : 'unmatched');
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const method = req.method;
      metrics.httpRequests.inc({ route, method, status: String(res.statusCode) });
      metrics.httpDuration.observe({ route, method }, seconds);
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            method,
            path: res.locals.logPath ?? redactPath(req.originalUrl),
            route,
            status: res.statusCode,
            ms: Math.round(seconds * 10_000) / 10,
            bytes: res.locals.bytes ?? Number(res.getHeader('Content-Length') ?? 0),
          },
          'request',
        );
      }
    });
    next();
  };
}

/**
 * The security headers on every answer, set before any router runs: the answers routers make by themselves
 * (OPTIONS with its Allow list) and those of any method a route does not know carry them too. Only GET and HEAD
 * under /feeds/ are left to the feed router, which writes them in the one writeHead call of its hot path (and
 * on each of its other answers); what it does not answer gets them from the middleware after it.
 */
function everyAnswerSecured(pairs: readonly [string, string][]) {
  return function everyAnswerSecuredMiddleware(req: Request, res: Response, next: NextFunction) {
    const feedRead = (req.method === 'GET' || req.method === 'HEAD') && /^\/feeds\//i.test(req.path);
    if (!feedRead) setSecurityHeaders(res, pairs);
    next();
  };
}

/** Counts each client's lookups of unknown, malformed or revoked tokens (undefined: not limited). */
function failedLookupsOf(
  opts: Pick<AppOptions, 'failedLookupLimit' | 'metrics'>,
  security: readonly [string, string][],
): FailedLookups | undefined {
  const lookups = opts.failedLookupLimit ?? { perSecond: 1, burst: 60 };
  return lookups
    ? new FailedLookups({
        ...lookups,
        securityHeaders: security,
        onLimited: (req) => opts.metrics.rateLimited.inc({ route: req.baseUrl || 'unmatched' }),
      })
    : undefined;
}

/** The per-client limit in front of a mount path's router, or nothing when no limit is set. */
function limitedPerClient(
  route: string,
  limit: (AppOptions['feedRateLimit'] & object) | false,
  security: readonly [string, string][],
  metrics: Metrics,
): RequestHandler[] {
  if (!limit) return [];
  return [
    rateLimit({
      ...limit,
      securityHeaders: security,
      onLimited: () => metrics.rateLimited.inc({ route }),
    }),
  ];
}

/**
 * res.locals.schoolNames: the schools the store holds, read at most once a minute; only a process's first request
 * waits for the read, every later one uses what was read last (no store read per request on the feeds' path), so
 * the dead-link page can name the school.
 */
function schoolNamesFor(store: Pick<Store, 'records'>) {
  let names: string[] = [];
  let readAt = Number.NEGATIVE_INFINITY;
  let first: Promise<void> | null = null;
  const read = () =>
    store.records.listSchools().then(
      (list) => {
        names = list.map((s) => s.name);
      },
      () => {},
    );
  return function schoolNames(_req: Request, res: Response, next: NextFunction) {
    const now = performance.now();
    const done = () => {
      res.locals.schoolNames = names;
      next();
    };
    if (now - readAt <= 60_000) return done();
    readAt = now;
    if (first) {
      void read();
      return done();
    }
    first = read();
    first.then(done, done);
  };
}

export function createApp(opts: AppOptions): express.Express {
  const { logger } = opts;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (opts.trustProxy !== undefined) app.set('trust proxy', opts.trustProxy);
  const hsts = opts.publicUrl.startsWith('https://');
  const security = securityHeaderPairs({ hsts });
  // startServer answers what never reaches the app (a request Node's parser refuses) with them too.
  app.locals.securityHeaders = security;
  app.use(requestObserver(opts.metrics, logger));
  app.use(everyAnswerSecured(security));
  app.use(formBodiesOnly(security));
  app.use(schoolNamesFor(opts.store));

  const limit = opts.feedRateLimit ?? false;
  const failedLookups = failedLookupsOf(opts, security);
  const guard = opts.feedGuard;
  const vouchesFor = guard ? (r: FeedToken | null) => guard.vouchesFor(r) : undefined;
  // The pages warn at the age /readyz calls too old (a few incremental intervals).
  const maxPullAge = opts.readiness?.maxPullAgeMs;
  const staleAfter = maxPullAge ? { staleAfterMs: maxPullAge } : {};
  // One token lookup for feeds and family links: both answer from memory during a store outage only what was
  // confirmed since the last revocation it knows of.
  const tokens = new FeedTokenResolver(opts.store);
  const feeds = feedsRouter({
    store: opts.store,
    tokens,
    feeds: opts.feeds,
    publicUrl: opts.publicUrl.replace(/\/+$/, ''),
    ...(opts.feedCacheControl ? { cacheControl: opts.feedCacheControl } : {}),
    securityHeaders: security,
    ...(opts.liveGoogleCalendar ? { liveGoogleCalendar: opts.liveGoogleCalendar } : {}),
    ...(opts.demo ? { demo: true } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(vouchesFor ? { vouchesFor } : {}),
    ...(failedLookups ? { failedLookups } : {}),
    ...(opts.absences ? { absences: opts.absences } : {}),
    ...staleAfter,
  });
  const families = new FamilyLinks({
    store: opts.store,
    feeds: opts.feeds,
    ...(opts.now ? { now: opts.now } : {}),
    ...(vouchesFor ? { serves: (r: FeedToken) => vouchesFor(r) } : {}),
    revocations: tokens,
  });
  const family = familyRouter({
    store: opts.store,
    families,
    ...(vouchesFor ? { vouchesFor } : {}),
    publicUrl: opts.publicUrl.replace(/\/+$/, ''),
    securityHeaders: security,
    ...(failedLookups ? { failedLookups } : {}),
    ...(opts.feedCacheControl ? { cacheControl: opts.feedCacheControl } : {}),
    ...(opts.demo ? { demo: true } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.absences ? { absences: opts.absences } : {}),
    ...staleAfter,
  });
  // Before the feed and family routers: their paths are the pages' own (`/feeds/<token>/absences`).
  if (opts.absences)
    app.use(
      absenceRouter({
        store: opts.store,
        absences: opts.absences,
        families,
        feeds: opts.feeds,
        publicUrl: opts.publicUrl.replace(/\/+$/, ''),
        securityHeaders: security,
        ...(failedLookups ? { failedLookups } : {}),
        ...(vouchesFor ? { vouchesFor } : {}),
      }),
    );
  app.use('/feeds', ...limitedPerClient('/feeds', limit, security, opts.metrics), feeds);
  app.use('/family', ...limitedPerClient('/family', limit, security, opts.metrics), family);

  // A feed read the feed router did not answer (`/feeds/`) gets the security headers here.
  app.use(securityHeaders({ hsts }));
  app.use(
    healthRoutes({
      store: opts.store,
      ...(opts.feedGuard ? { feedProblems: () => opts.feedGuard!.problems() } : {}),
      ...(opts.readiness ?? {}),
    }),
  );
  app.use(metricsRoute({ metrics: opts.metrics, token: opts.metricsToken ?? null, failedLookups }));

  for (const [path, router] of Object.entries(opts.routers ?? {})) app.use(path, router);

  app.use((req: Request, res: Response) => {
    res.locals.route ??= 'unmatched';
    if (isStaffPath(req.path)) staffNotFound(req, res);
    else notFound(res);
  });
  const trouble = opts.readiness?.storeTrouble;
  app.use(
    errorHandler({
      logger,
      securityHeaders: security,
      ...(trouble ? { onServerError: (err: unknown) => trouble.requestFailed(err) } : {}),
    }),
  );
  return app;
}
