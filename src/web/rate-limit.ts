// Throttling of the capability routes (/feeds, /family). What is throttled is failure, not success:
// - every lookup of an unknown, malformed or revoked token takes one from the sending client's failure bucket
//   (FailureThrottle, the same leaky bucket that throttles failed sign-ins); an empty bucket answers 429 to that
//   client's unknown tokens until it refills, while its valid tokens are still served: a school's Wi-Fi is one
//   address and Google and Microsoft fetch every family's feed from a handful, so one device polling a rotated
//   URL must not cut off everyone behind the same address. (The answer to an unknown token is 429 instead of
//   404; 192-bit tokens cannot be guessed either way, and the throttle bounds the store lookups they cost.)
// - valid feed requests are not limited unless an operator sets a per-client limit (feedRateLimit /
//   FEED_RATE_LIMIT): a token bucket with a steady refill and a Retry-After.
// Every 429 carries the same security headers as every other answer.
import type { NextFunction, Request, Response } from 'express';
import { FailureThrottle } from '../identity/throttle.ts';
import { addressKey } from '../util/address-key.ts';
import { TokenBuckets } from '../util/token-bucket.ts';
import { schoolOffice, sendErrorPage, wantsPage } from './errors.ts';
import { setSecurityHeaders } from './security.ts';

export interface RateLimitOptions {
  /** Sustained requests per second per IP. */
  perSecond: number;
  /** Bucket size: requests an IP may make at once. */
  burst: number;
  /** Buckets kept before idle (full) ones are dropped. */
  maxClients?: number;
  onLimited?: (req: Request) => void;
  now?: () => number;
  /** Headers every response carries (security.ts). */
  securityHeaders?: readonly [string, string][];
}

/**
 * The client as the app sees it: behind a trusted proxy (TRUST_PROXY) the rightmost address of X-Forwarded-For
 * that is not itself trusted (Express's req.ip), so entries a client writes itself, to the left of what its
 * proxy appended, are never read. Throttles count it by addressKey (an IPv6 client by its /64).
 */
export function clientOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** Why a client is asked to wait: too many requests of any kind (the operator's limit), or too many dead links. */
type Limited = 'requests' | 'dead-links';

/**
 * 429 with Retry-After: a page in the path's layout for a browser (a parent behind a school's Wi-Fi may meet it),
 * one line of text for a calendar app, which waits and asks again by itself.
 */
function tooMany(
  res: Response,
  retryAfter: number,
  securityHeaders: readonly [string, string][],
  why: Limited,
): void {
  setSecurityHeaders(res, securityHeaders);
  res.setHeader('Retry-After', String(retryAfter));
  res.setHeader('Cache-Control', 'no-store');
  if (wantsPage(res.req)) {
    const wait = `${retryAfter} second${retryAfter === 1 ? '' : 's'}`;
    sendErrorPage(
      res.req,
      res,
      429,
      'Too many tries',
      why === 'dead-links'
        ? [
            `Too many calendar links that do not work were opened from your network address in a short time. Wait ${wait} and open the link again.`,
            `If it still does not work then, ask ${schoolOffice(res)} for the new calendar link.`,
          ]
        : [
            `Too many requests came from your network address in a short time. Wait ${wait} and try again.`,
            'Calendar apps that subscribed keep what they have and ask again by themselves.',
          ],
    );
    return;
  }
  res.status(429);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end('Too many requests\n');
}

/** The operator's per-client limit on every request of a route (off by default for feeds). */
export function rateLimit(opts: RateLimitOptions) {
  const buckets = new TokenBuckets({
    capacity: opts.burst,
    refillPerSecond: opts.perSecond,
    ...(opts.maxClients !== undefined ? { maxKeys: opts.maxClients } : {}),
    ...(opts.now ? { now: opts.now } : {}),
  });

  return function rateLimitMiddleware(req: Request, res: Response, next: NextFunction) {
    const wait = buckets.take(addressKey(clientOf(req)));
    if (wait === 0) {
      next();
      return;
    }
    opts.onLimited?.(req);
    tooMany(res, wait, opts.securityHeaders ?? [], 'requests');
  };
}

export interface FailedLookupOptions {
  /** Unknown tokens a client may ask for at once. Default 60. */
  burst?: number;
  /** Unknown tokens forgiven per second. Default 1. */
  perSecond?: number;
  securityHeaders: readonly [string, string][];
  onLimited?: (req: Request) => void;
  now?: () => number;
}

/** Failed capability lookups per client: the routes call `refuse` where they would answer 404. */
export class FailedLookups {
  readonly #throttle: FailureThrottle;
  readonly #opts: FailedLookupOptions;

  constructor(opts: FailedLookupOptions) {
    this.#opts = opts;
    this.#throttle = new FailureThrottle({
      capacity: opts.burst ?? 60,
      refillPerSecond: opts.perSecond ?? 1,
      ...(opts.now ? { now: opts.now } : {}),
    });
  }

  /**
   * Counts one failed lookup by the request's client. When the client has used its allowance, answers 429 and
   * returns true; otherwise returns false and the caller answers as it would (404).
   */
  refuse(req: Request, res: Response): boolean {
    const client = clientOf(req);
    const wait = this.#throttle.retryAfter(client);
    if (wait > 0) {
      this.#opts.onLimited?.(req);
      tooMany(res, wait, this.#opts.securityHeaders, 'dead-links');
      return true;
    }
    this.#throttle.fail(client);
    return false;
  }

  /** Counts failures without answering (a form that named unknown links). Returns the wait, 0 if none. */
  fail(req: Request, count = 1): number {
    const client = clientOf(req);
    for (let i = 0; i < count; i++) this.#throttle.fail(client);
    return this.#throttle.retryAfter(client);
  }

  /** Seconds the request's client must wait before its failing lookups are heard again (0: none). */
  retryAfter(req: Request): number {
    return this.#throttle.retryAfter(clientOf(req));
  }

  tooMany(req: Request, res: Response, wait: number): void {
    this.#opts.onLimited?.(req);
    tooMany(res, wait, this.#opts.securityHeaders, 'dead-links');
  }
}
