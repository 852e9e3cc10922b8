// GET/HEAD /feeds/<token>.ics (the calendar) and /feeds/<token> (the page for a person).
// A request costs a token lookup and a cache read: the bytes and their encodings were rendered ahead.
// Unknown, malformed, rotated and revoked tokens, and feeds whose subject is gone, all get the same 404 — but only
// while this process can vouch for its answer: with no rotation record vouching for the feed secret (trust.ts)
// every feed URL answers 503 with Retry-After, so calendar apps try again instead of dropping the subscription.

import { type Request, type Response, Router } from 'express';
import type { CalendarEvent } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { FamilyAbsences } from '../families/absences.ts';
import type { FeedService, RenderedFeed } from '../feeds/feed-service.ts';
import {
  isReminderKey,
  REMINDER_KEYS,
  type ReminderKey,
  reminderEtag,
  reminderVariant,
} from '../feeds/reminders.ts';
import { FeedTokenResolver, tokenForLog } from '../feeds/tokens.ts';
import type { FeedScope, FeedToken, SchoolId, Store } from '../store/types.ts';
import { html, type SafeHtml } from '../util/html.ts';
import { childLink, landingAbsences } from './absence-links.ts';
import { deviceOf } from './device.ts';
import { schoolOffice, wantsPage as wantsPageOf } from './errors.ts';
import { eventPath, sendEventFile } from './event-download.ts';
import { landingPage } from './landing.ts';
import { knownLastPull, knownSchool, LastKnown, unlessUnreachable } from './last-known.ts';
import { LANDING_CSP, LANDING_PERMISSIONS, sendNotice } from './layouts.ts';
import type { FailedLookups } from './rate-limit.ts';
import { setSecurityHeaders } from './security.ts';

export interface FeedRouterOptions {
  store: Pick<Store, 'records' | 'runs' | 'links'>;
  feeds: Pick<FeedService, 'get'>;
  /** Absolute base for links, e.g. `https://calendars.school.org` (no trailing slash). */
  publicUrl: string;
  /** Cache-Control for calendar responses. */
  cacheControl?: string;
  /** Headers every response carries (security.ts). */
  securityHeaders: readonly [string, string][];
  /**
   * The Google calendar a push target keeps for this feed's subject and lets families read, if any: the
   * landing page then offers it ("updates within minutes") instead of Google's slow feed subscription.
   */
  liveGoogleCalendar?: (schoolId: SchoolId, scope: FeedScope, scopeId: Id) => Promise<string | null>;
  /** The demo: a QR code of a localhost address is still shown (elsewhere a phone could not open it). */
  demo?: boolean;
  now?: () => Date;
  /** How old a school's last pull may be before its pages say the calendar may be out of date. */
  staleAfterMs?: (schoolId: SchoolId) => number | null;
  /**
   * Whether this process can vouch for its answer to a token: a known one (its school's rotation record vouches)
   * or an unknown one (null: no school is unsure). False answers 503 with Retry-After.
   */
  vouchesFor?: (record: FeedToken | null) => Promise<boolean>;
  /** Counts each client's lookups of unknown tokens and answers 429 past its allowance (rate-limit.ts). */
  failedLookups?: FailedLookups;
  /** "Can't make it?" on a child's page, where the school turns it on. */
  absences?: FamilyAbsences;
  /** The token lookup (shared with family links, which answer from memory under the same revocation rule). */
  tokens?: FeedTokenResolver;
}

/** A phone that scans a QR code of one of these cannot reach this server. */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return true;
  }
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    host === '0.0.0.0' ||
    /^127\./.test(host)
  );
}

/** The `reminder` query parameter: 'none' when absent, null when it is not one we offer (a 400). */
export function reminderOf(query: unknown): ReminderKey | null {
  if (query === undefined) return 'none';
  return isReminderKey(query) ? query : null;
}

/** Whether the client is a browser asking for a page (it lists HTML before plain text); calendar apps are not. */
const wantsPage = (res: Response) => wantsPageOf(res.req);

export function badReminder(res: Response, securityHeaders: readonly [string, string][]): void {
  setSecurityHeaders(res, securityHeaders);
  if (wantsPage(res)) {
    sendNotice(
      res,
      400,
      'This reminder is not offered',
      html`<h1>This reminder is not offered</h1><p>The link asks for a reminder this calendar does not offer. Open the calendar\u2019s page without it (remove everything from \u201c?\u201d in the address) and choose a reminder there: ${REMINDER_KEYS.filter((k) => k !== 'none').join(', ')} or none.</p>`,
    );
    return;
  }
  res.status(400);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(`reminder must be one of: ${REMINDER_KEYS.join(', ')}\n`);
}

// One page for every link we do not serve: unknown, malformed, rotated and revoked alike, so it reveals nothing
// about which it was. A calendar app sees the 404; a parent who opens the link in a browser is told what to do and
// whom to ask: the school by name where the service holds one school (res.locals.schoolNames, app.ts); where it
// holds several, an unknown link cannot say whose it was, and listing them would tell strangers who uses it.
function deadLinkPage(res: Response): SafeHtml {
  const office = schoolOffice(res);
  return html`<h1>This calendar link does not work</h1>
<p>The link may have been replaced by a new one, or copied incompletely.</p>
<p>Please ask ${office} for the new calendar link. Once you have it, subscribe again with the new link
and remove the old calendar from your calendar app.</p>`;
}

export function notFound(res: Response, securityHeaders: readonly [string, string][] = []): void {
  setSecurityHeaders(res, securityHeaders);
  sendNotice(res, 404, 'This calendar link does not work', deadLinkPage(res));
}

/** Seconds a calendar app is asked to wait while this process cannot vouch for a URL. */
export const UNSURE_RETRY_AFTER_S = 300;

/** This process cannot tell whether the URL is valid (trust.ts): "try again later", never "gone". */
export function unavailable(res: Response, securityHeaders: readonly [string, string][]): void {
  setSecurityHeaders(res, securityHeaders);
  if (wantsPage(res)) {
    res.setHeader('Retry-After', String(UNSURE_RETRY_AFTER_S));
    sendNotice(
      res,
      503,
      'This calendar is unavailable for a while',
      html`<h1>This calendar is unavailable for a while</h1><p>Please try again in a few minutes. Your calendar app keeps what it has meanwhile.</p>`,
    );
    return;
  }
  res.status(503);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Retry-After', String(UNSURE_RETRY_AFTER_S));
  res.end('This calendar is unavailable for a while; try again later.\n');
}

/**
 * A token we do not know: 503 while this process cannot vouch for that (vouchesFor), else 429 once the client
 * has failed too often (FailedLookups), else 404.
 */
export async function unknownCapability(
  req: Request,
  res: Response,
  failedLookups: FailedLookups | undefined,
  securityHeaders: readonly [string, string][],
  vouchesFor?: (record: null) => Promise<boolean>,
): Promise<void> {
  if (vouchesFor && !(await vouchesFor(null))) return unavailable(res, securityHeaders);
  if (failedLookups?.refuse(req, res)) return;
  notFound(res, securityHeaders);
}

/**
 * The token of a capability path (`<base>/<token>` or `<base>/<token>.ics`); the route and a log path with the
 * token cut short (tokenForLog) go where the request log reads them.
 */
export function capabilityPath(
  res: Response,
  base: '/feeds' | '/family',
  name: string,
): { token: string; isIcs: boolean } {
  const isIcs = name.endsWith('.ics');
  res.locals.route = isIcs ? `${base}/:token.ics` : `${base}/:token`;
  const token = isIcs ? name.slice(0, -4) : name;
  res.locals.logPath = `${base}/${tokenForLog(token)}${isIcs ? '.ics' : ''}`;
  return { token, isIcs };
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

export function etagFor(base: string, enc: Encoding): string {
  return enc === 'identity' ? `"${base}"` : `"${base}-${enc === 'gzip' ? 'gz' : 'br'}"`;
}

/**
 * If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2). Any encoding's tag of the current bytes
 * matches: they are the same calendar, and a client that switched encodings need not download it again.
 */
export function notModified(req: Request, feed: { lastModified: Date }, base: string): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) {
    if (inm.trim() === '*') return true;
    return inm.split(',').some((t) => {
      const tag = t
        .trim()
        .replace(/^W\//, '')
        .replace(/^"|"$/g, '')
        .replace(/-(gz|br)$/, '');
      return tag === base;
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

/**
 * One coming session of a feed or family calendar as its own file (event-download.ts), with the reminder asked
 * for; a session the page does not offer answers like an unknown link: it says nothing of the session.
 */
export function serveEventFile(
  req: Request,
  res: Response,
  feed: { body: Buffer; upcoming: readonly CalendarEvent[] },
  sessionId: number | null,
  securityHeaders: readonly [string, string][],
): void {
  const reminder = reminderOf(req.query.reminder);
  if (reminder === null) {
    badReminder(res, securityHeaders);
    return;
  }
  const bytes = reminder === 'none' ? feed : reminderVariant(feed, reminder);
  const ics = bytes.body.toString('utf8');
  if (!sendEventFile(res, { ics, upcoming: feed.upcoming, sessionId, securityHeaders }))
    notFound(res, securityHeaders);
}

export function feedsRouter(opts: FeedRouterOptions): Router {
  const router = Router();
  const cacheControl = opts.cacheControl ?? 'private, max-age=300';
  const tokens = opts.tokens ?? new FeedTokenResolver(opts.store);
  const known = new LastKnown();
  const securityFlat = opts.securityHeaders.flat();
  const now = opts.now ?? (() => new Date());

  /** The rendered feed of a token, or null when the answer (503, 429, 404) has been sent. */
  async function feedOf(req: Request, res: Response, token: string) {
    const record = await tokens.resolve(token);
    if (record && opts.vouchesFor && !(await opts.vouchesFor(record))) {
      unavailable(res, opts.securityHeaders);
      return null;
    }
    const feed = record && (await opts.feeds.get(record.schoolId, record.scope, record.scopeId));
    if (!record || !feed) {
      await unknownCapability(req, res, opts.failedLookups, opts.securityHeaders, opts.vouchesFor);
      return null;
    }
    return { record, feed };
  }

  // One coming session of the feed as a file to add (event-download.ts): the same capability, the same 404s.
  router.get('/:name/events/:file', async (req, res) => {
    const token = req.params.name ?? '';
    const sessionId = eventPath(res, '/feeds', token, req.params.file ?? '');
    const found = await feedOf(req, res, token);
    if (found) serveEventFile(req, res, found.feed, sessionId, opts.securityHeaders);
  });

  router.get('/:name', async (req, res) => {
    const name = req.params.name ?? '';
    const { token, isIcs } = capabilityPath(res, '/feeds', name);
    const found = await feedOf(req, res, token);
    if (!found) return;
    const reminder = reminderOf(req.query.reminder);
    if (reminder === null) return badReminder(res, opts.securityHeaders);
    if (!isIcs) await sendFeedPage(req, res, opts, { token, ...found, reminder, known, now: now() });
    else await sendFeedCalendar(req, res, found.feed, reminder, { securityFlat, cacheControl });
  });

  return router;
}

/** The page for a person: how to subscribe, what is coming, "Can't make it?" where the school offers it. */
async function sendFeedPage(
  req: Request,
  res: Response,
  opts: FeedRouterOptions,
  at: {
    token: string;
    record: FeedToken;
    feed: RenderedFeed;
    reminder: ReminderKey;
    known: LastKnown;
    now: Date;
  },
): Promise<void> {
  const { token, record, feed, known } = at;
  const { schoolId, scope, scopeId } = record;
  // What the page reads of the store besides the feed, as last read while the store cannot be reached.
  const [updatedAt, live, school] = await Promise.all([
    knownLastPull(known, opts.store, schoolId),
    known.read(`live|${schoolId}|${scope}|${scopeId}`, () =>
      opts.liveGoogleCalendar ? opts.liveGoogleCalendar(schoolId, scope, scopeId) : null,
    ),
    knownSchool(known, opts.store, schoolId),
  ]);
  const pageUrl = `${opts.publicUrl}/feeds/${token}`;
  // "Can't make it?" needs the store: while it cannot be reached, the page says so where the forms would be.
  const absences = await unlessUnreachable(
    () =>
      landingAbsences(req, res, opts, pageUrl, () => childLink(opts.store, record, feed), feed.upcoming, {
        schoolId,
        reports: scope === 'student',
        now: at.now,
      }),
    undefined,
  );
  const html = await landingPage({
    scope,
    name: feed.def.calendarName,
    description: feed.def.description,
    pageUrl,
    feedUrl: `${opts.publicUrl}/feeds/${token}.ics`,
    reminder: at.reminder,
    upcoming: feed.upcoming,
    eventCount: feed.eventCount,
    timeZone: feed.upcoming[0]?.timeZone ?? school?.timeZone ?? 'UTC',
    updatedAt,
    staleAfterMs: opts.staleAfterMs?.(schoolId) ?? null,
    now: at.now,
    device: deviceOf(req.headers['user-agent']),
    liveGoogleCalendarId: live,
    showQr: opts.demo === true || !isLocalUrl(opts.publicUrl),
    familyFrom: scope === 'staff' ? null : token,
    familyAction: `${opts.publicUrl}/family`,
    ...(absences ? { absences } : {}),
  });
  setSecurityHeaders(res, opts.securityHeaders);
  sendLandingPage(res, html);
}

/** A landing page (feed or family): never cached by shared caches, under the landing pages' CSP. */
export function sendLandingPage(res: Response, page: string): void {
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'private, no-cache');
  res.setHeader('Content-Security-Policy', LANDING_CSP);
  res.setHeader('Permissions-Policy', LANDING_PERMISSIONS);
  res.end(page);
}

/** The calendar itself: the hot path, all headers in one writeHead call (setHeader validates and stores each). */
async function sendFeedCalendar(
  req: Request,
  res: Response,
  feed: RenderedFeed,
  reminder: ReminderKey,
  fixedFor: { securityFlat: string[]; cacheControl: string },
): Promise<void> {
  let enc = chooseEncoding(req.headers['accept-encoding']);
  // Reminder variants are kept as identity and gzip only (few clients ask for brotli).
  if (reminder !== 'none' && enc === 'br')
    enc = chooseEncoding(req.headers['accept-encoding']?.replace(/\bbr\b/g, 'x-none'));
  const base = reminderEtag(feed.etag, reminder);
  const fixed = fixedOf(feed);
  const headers: string[] = [...fixedFor.securityFlat];
  headers.push(
    'Content-Type',
    'text/calendar; charset=utf-8',
    'Cache-Control',
    fixedFor.cacheControl,
    'Vary',
    'Accept-Encoding',
    'ETag',
    etagFor(base, enc),
    'Last-Modified',
    fixed.lastModified,
  );
  if (notModified(req, feed, base)) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  let body: Buffer;
  if (reminder === 'none') body = enc === 'br' ? await feed.br() : enc === 'gzip' ? feed.gzip : feed.body;
  else {
    const variant = reminderVariant(feed, reminder);
    body = enc === 'gzip' ? await variant.gzip() : variant.body;
  }
  if (enc !== 'identity') headers.push('Content-Encoding', enc);
  headers.push('Content-Disposition', fixed.disposition, 'Content-Length', String(body.length));
  res.locals.bytes = body.length;
  res.writeHead(200, headers);
  // Node writes no body for HEAD; the headers are those of GET.
  res.end(body);
}
