// A per-IP token bucket for the feed routes. Hand-written rather than express-rate-limit: the need is one
// in-memory bucket map with a steady refill (smooth, unlike fixed windows) and a Retry-After, about forty lines.
// Limits must be generous: Google and Microsoft fetch every subscriber's feed from a handful of addresses.
import type { NextFunction, Request, Response } from 'express';

export interface RateLimitOptions {
  /** Sustained requests per second per IP. */
  perSecond: number;
  /** Bucket size: requests an IP may make at once. */
  burst: number;
  /** Buckets kept before idle (full) ones are dropped. */
  maxClients?: number;
  onLimited?: (req: Request) => void;
  now?: () => number;
}

export function rateLimit(opts: RateLimitOptions) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const now = opts.now ?? (() => performance.now());
  const maxClients = opts.maxClients ?? 50_000;
  const refillPerMs = opts.perSecond / 1000;

  function prune(t: number) {
    for (const [ip, b] of buckets) {
      if (b.tokens + (t - b.at) * refillPerMs >= opts.burst) buckets.delete(ip);
    }
  }

  return function rateLimitMiddleware(req: Request, res: Response, next: NextFunction) {
    const ip = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const t = now();
    let b = buckets.get(ip);
    if (!b) {
      if (buckets.size >= maxClients) prune(t);
      b = { tokens: opts.burst, at: t };
      buckets.set(ip, b);
    } else {
      b.tokens = Math.min(opts.burst, b.tokens + (t - b.at) * refillPerMs);
      b.at = t;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      next();
      return;
    }
    opts.onLimited?.(req);
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil((1 - b.tokens) / refillPerMs / 1000))));
    res.setHeader('Cache-Control', 'no-store');
    res.status(429).type('text/plain').send('Too many requests\n');
  };
}
