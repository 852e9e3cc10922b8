// Security headers, set by hand: the app serves calendar files, one small HTML page per feed and JSON/text
// endpoints, so a fixed set of headers plus a per-page CSP is all it needs (helmet would add a dependency to
// set the same dozen lines, and the landing page needs its own script hash anyway).
import type { NextFunction, Request, Response } from 'express';

/** Nothing by default: a response that needs more (the landing page) sets its own CSP. */
export const DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function securityHeaders(opts: { hsts: boolean }) {
  return function securityHeadersMiddleware(_req: Request, res: Response, next: NextFunction) {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Feed URLs are secrets: never send them onwards in a Referer.
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Content-Security-Policy', DEFAULT_CSP);
    res.setHeader('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), interest-cohort=()');
    if (opts.hsts) res.setHeader('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    next();
  };
}
