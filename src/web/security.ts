// Security headers, set by hand: the app serves calendar files, one small HTML page per feed and JSON/text
// endpoints, so a fixed set of headers plus a per-page CSP is all it needs (helmet would add a dependency to
// set the same dozen lines, and the landing page needs its own script hash anyway).
import type { NextFunction, Request, Response } from 'express';

/** Nothing by default: a response that needs more (the landing page) sets its own CSP. */
export const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** The headers every response carries. The feed route writes them in one writeHead call (its hot path). */
export function securityHeaderPairs(opts: { hsts: boolean }): [string, string][] {
  return [
    ['X-Content-Type-Options', 'nosniff'],
    // Feed URLs are secrets: never send them onwards in a Referer.
    ['Referrer-Policy', 'no-referrer'],
    ['X-Frame-Options', 'DENY'],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
    ['Content-Security-Policy', DEFAULT_CSP],
    ['Permissions-Policy', 'camera=(), microphone=(), geolocation=(), interest-cohort=()'],
    ...(opts.hsts
      ? [['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'] as [string, string]]
      : []),
  ];
}

export function setSecurityHeaders(res: Response, pairs: readonly [string, string][]): void {
  for (const [k, v] of pairs) res.setHeader(k, v);
}

export function securityHeaders(opts: { hsts: boolean }) {
  const pairs = securityHeaderPairs(opts);
  return function securityHeadersMiddleware(_req: Request, res: Response, next: NextFunction) {
    setSecurityHeaders(res, pairs);
    next();
  };
}
