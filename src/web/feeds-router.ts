// GET/HEAD /feeds/<token>.ics (the calendar) and /feeds/<token> (the page for a person).
// A request costs a token lookup and a cache read: the bytes and their encodings were rendered ahead.
// Unknown, malformed, rotated and revoked tokens, and feeds whose subject is gone, all get the same 404.
import { type Request, type Response, Router } from 'express';
import type { FeedService, RenderedFeed } from '../feeds/service.ts';
import { FeedTokenResolver, tokenForLog } from '../feeds/tokens.ts';
import type { Store } from '../store/types.ts';
import { LANDING_CSP, landingPage } from './landing.ts';
import { setSecurityHeaders } from './security.ts';

export interface FeedRouterOptions {
  store: Store;
  feeds: FeedService;
  /** Absolute base for links, e.g. `https://calendars.school.org` (no trailing slash). */
  publicUrl: string;
  /** Cache-Control for calendar responses. */
  cacheControl?: string;
  /** How long a live token is remembered without asking the store (default 2000 ms; 0: every request). */
  tokenCacheMs?: number;
  /** Headers every response carries (security.ts). */
  securityHeaders: readonly [string, string][];
}

const NOT_FOUND = 'Not found\n';

export function notFound(res: Response, securityHeaders: readonly [string, string][] = []): void {
  setSecurityHeaders(res, securityHeaders);
  res.status(404);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(NOT_FOUND);
}

type Encoding = 'br' | 'gzip' | 'identity';

/** The best encoding the client accepts (q-values honoured); identity unless refused. */
export function chooseEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  const q = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let value = 1;
    for (const p of params) {
      const m = /^\s*q=([0-9.]+)\s*$/.exec(p);
      if (m) value = Number(m[1]);
    }
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const of = (name: string) => q.get(name) ?? q.get('*') ?? (name === 'identity' ? 1 : 0);
  const candidates: Encoding[] = ['br', 'gzip', 'identity'];
  let best: Encoding = 'identity';
  let bestQ = 0;
  for (const c of candidates) {
    const v = of(c);
    if (v > bestQ) {
      best = c;
      bestQ = v;
    }
  }
  return best;
}

function etagFor(feed: RenderedFeed, enc: Encoding): string {
  return enc === 'identity' ? `"${feed.etag}"` : `"${feed.etag}-${enc === 'gzip' ? 'gz' : 'br'}"`;
}

/**
 * If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2). Any encoding's tag of the current bytes
 * matches: they are the same calendar, and a client that switched encodings need not download it again.
 */
function notModified(req: Request, feed: RenderedFeed): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    return inm.split(',').some((t) => {
      const tag = t
        .trim()
        .replace(/^W\//, '')
        .replace(/^"|"$/g, '')
        .replace(/-(gz|br)$/, '');
      return tag === feed.etag;
    });
  }
  const ims = req.headers['if-modified-since'];
  if (ims !== undefined) {
    const since = Date.parse(ims);
    return Number.isFinite(since) && feed.lastModified.getTime() <= since;
  }
  return false;
}

function fileName(feed: RenderedFeed): string {
  const slug = feed.def.subject
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/\s+/g, '-')
    .toLowerCase();
  return `${slug || feed.def.scope}.ics`;
}

/** Per rendered feed, the header values that do not depend on the request (made once, not per request). */
const fixedHeaders = new WeakMap<RenderedFeed, { lastModified: string; disposition: string }>();

function fixedOf(feed: RenderedFeed) {
  let f = fixedHeaders.get(feed);
  if (!f) {
    f = {
      lastModified: feed.lastModified.toUTCString(),
      disposition: `inline; filename="${fileName(feed)}"`,
    };
    fixedHeaders.set(feed, f);
  }
  return f;
}

export function feedsRouter(opts: FeedRouterOptions): Router {
  const router = Router();
  const cacheControl = opts.cacheControl ?? 'private, max-age=300';
  const tokens = new FeedTokenResolver(opts.store, { ttlMs: opts.tokenCacheMs ?? 2000 });
  const securityFlat = opts.securityHeaders.flat();

  router.get('/:name', async (req, res) => {
    const name = req.params.name ?? '';
    const isIcs = name.endsWith('.ics');
    res.locals.route = isIcs ? '/feeds/:token.ics' : '/feeds/:token';
    const token = isIcs ? name.slice(0, -4) : name;
    res.locals.logPath = `/feeds/${tokenForLog(token)}${isIcs ? '.ics' : ''}`;
    const record = await tokens.resolve(token);
    if (!record) return notFound(res, opts.securityHeaders);
    const feed = await opts.feeds.get(record.schoolId, record.scope, record.scopeId);
    if (!feed) return notFound(res, opts.securityHeaders);

    if (!isIcs) {
      const html = await landingPage({
        name: feed.def.calendarName,
        description: feed.def.description,
        feedUrl: `${opts.publicUrl}/feeds/${token}.ics`,
        upcoming: feed.upcoming,
        eventCount: feed.eventCount,
      });
      setSecurityHeaders(res, opts.securityHeaders);
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.setHeader('Cache-Control', 'private, no-cache');
      res.setHeader('Content-Security-Policy', LANDING_CSP);
      res.end(html);
      return;
    }

    // The hot path: all headers in one writeHead call (setHeader validates and stores each one separately).
    const enc = chooseEncoding(req.headers['accept-encoding']);
    const fixed = fixedOf(feed);
    const headers: string[] = [...securityFlat];
    headers.push(
      'Content-Type',
      'text/calendar; charset=utf-8',
      'Cache-Control',
      cacheControl,
      'Vary',
      'Accept-Encoding',
      'ETag',
      etagFor(feed, enc),
      'Last-Modified',
      fixed.lastModified,
    );
    if (notModified(req, feed)) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const body = enc === 'br' ? await feed.br() : enc === 'gzip' ? feed.gzip : feed.body;
    if (enc !== 'identity') headers.push('Content-Encoding', enc);
    headers.push('Content-Disposition', fixed.disposition, 'Content-Length', String(body.length));
    res.locals.bytes = body.length;
    res.writeHead(200, headers);
    // Node writes no body for HEAD; the headers are those of GET.
    res.end(body);
  });

  return router;
}
