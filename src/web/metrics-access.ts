// Who may read /metrics. Its counters say what families do (how many absence reports were made and refused, which
// routes answer what), the school ids and the Node version: nobody's business on the families' port. So the
// public app serves it only to a request bearing METRICS_TOKEN (`Authorization: Bearer …`), and otherwise as if
// it did not exist (404); METRICS_PORT serves it on a listen address of its own, for Prometheus on the inside.
import express, { type Request, type Response, Router } from 'express';
import type { Metrics } from '../metrics.ts';
import type { FailedLookups } from './rate-limit.ts';
import { securityHeaders } from './security.ts';
import { sameSecret } from './staff-request-auth.ts';

/** The bearer token of a request, or null. */
function bearerOf(req: Request): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
  return m?.[1] ?? null;
}

async function sendMetrics(metrics: Metrics, res: Response): Promise<void> {
  res.setHeader('Content-Type', metrics.registry.contentType);
  res.setHeader('Cache-Control', 'no-store');
  res.end(await metrics.registry.metrics());
}

/**
 * GET /metrics for a request bearing `token`. Without a token configured the route is not there (the app's 404);
 * a missing or wrong bearer is 401, counted like an unknown feed token so that guessing is throttled.
 */
export function metricsRoute(opts: {
  metrics: Metrics;
  token: string | null;
  failedLookups?: FailedLookups | undefined;
}): Router {
  const router = Router();
  const { token } = opts;
  if (!token) return router;
  router.get('/metrics', async (req, res, next) => {
    res.locals.route = '/metrics';
    try {
      const given = bearerOf(req);
      if (!given || !sameSecret(given, token)) {
        if (opts.failedLookups?.refuse(req, res)) return;
        res.setHeader('WWW-Authenticate', 'Bearer realm="rostercal metrics"');
        res.setHeader('Cache-Control', 'no-store');
        res
          .status(401)
          .type('text/plain')
          .send('401: /metrics needs Authorization: Bearer <METRICS_TOKEN>\n');
        return;
      }
      await sendMetrics(opts.metrics, res);
    } catch (err) {
      next(err);
    }
  });
  return router;
}

/**
 * The app of METRICS_PORT: /metrics and nothing else. Open to whoever reaches that address, unless METRICS_TOKEN
 * is set (then it asks for it there too).
 */
export function metricsApp(opts: { metrics: Metrics; token: string | null }): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(securityHeaders({ hsts: false }));
  if (opts.token) app.use(metricsRoute(opts));
  else
    app.get('/metrics', async (_req, res, next) => {
      try {
        await sendMetrics(opts.metrics, res);
      } catch (err) {
        next(err);
      }
    });
  app.use((_req: Request, res: Response) => {
    res.status(404).type('text/plain').send('404: this address serves /metrics only\n');
  });
  return app;
}
