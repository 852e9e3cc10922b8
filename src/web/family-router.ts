// One link for a family: POST /family (from a landing page's "add another child's link" form) makes a family
// link and sends the parent to its page; GET /family/<token> is that page and /family/<token>.ics its calendar
// (with the same reminder variants as a feed). Unknown and revoked links answer 404; a link whose members all dropped
// out (their own links rotated) still answers, saying which and how to add them back (feeds/family.ts).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import express, { type Request, type Response, Router } from 'express';
import { lostWords } from '../calendar/family.ts';
import type { FamilyAbsences } from '../families/absences.ts';
import type { FamilyFeed, FamilyLinks } from '../feeds/family.ts';
import { tokensIn } from '../feeds/family.ts';
import { type ReminderKey, reminderEtag, reminderVariant } from '../feeds/reminders.ts';
import { looksLikeToken } from '../feeds/tokens.ts';
import type { SchoolId, Store } from '../store/types.ts';
import { html, type SafeHtml } from '../util/html.ts';
import { familyLink, landingAbsences } from './absence-links.ts';
import { deviceOf } from './device.ts';
import { eventPath } from './event-download.ts';
import {
  badReminder,
  capabilityPath,
  chooseEncoding,
  etagFor,
  isLocalUrl,
  notModified,
  reminderOf,
  sendLandingPage,
  serveEventFile,
  unknownCapability,
} from './feeds-router.ts';
import { familyForm, landingPage } from './landing.ts';
import { knownLastPull, LastKnown, unlessUnreachable } from './last-known.ts';
import { LANDING_CSP, LANDING_PERMISSIONS, parentLayout, sendNotice } from './layouts.ts';
import type { FailedLookups } from './rate-limit.ts';
import { setSecurityHeaders } from './security.ts';

export interface FamilyRouterOptions {
  store: Pick<Store, 'runs'>;
  families: FamilyLinks;
  publicUrl: string;
  securityHeaders: readonly [string, string][];
  cacheControl?: string;
  /** Counts each client's unknown links and answers 429 past its allowance (rate-limit.ts). */
  failedLookups?: FailedLookups;
  /** Whether an unknown link may be called unknown (false while the feed secret is not vouched for: 503). */
  vouchesFor?: (record: null) => Promise<boolean>;
  demo?: boolean;
  now?: () => Date;
  /** How old a school's last pull may be before its pages say the calendar may be out of date. */
  staleAfterMs?: (schoolId: SchoolId) => number | null;
  /** "Can't make it?" for the family's children, where the school turns it on. */
  absences?: FamilyAbsences;
}

/**
 * jsQR (Apache-2.0, no dependencies) as npm installed it: a small, long-stable QR decoder in plain JavaScript, so
 * "scan their QR code" works in browsers without BarcodeDetector (Firefox, desktop Chrome on Linux and Windows,
 * older Safari). Read and compressed once, on first request; compressed on zlib's thread pool (its level-9 gzip
 * held the event loop every other request waits on: issue 28, "never a stall").
 */
let decoderCache: Promise<{ body: Buffer; gzip: Buffer; etag: string }> | undefined;
function qrDecoder(): Promise<{ body: Buffer; gzip: Buffer; etag: string }> {
  decoderCache ??= (async () => {
    const body = readFileSync(createRequire(import.meta.url).resolve('jsqr'));
    return {
      body,
      gzip: await promisify(gzip)(body, { level: 9 }),
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    };
  })();
  return decoderCache;
}

function problemPage(message: string, back: string | null, form: SafeHtml | null): SafeHtml {
  return html`<h1>The family link was not made</h1><p class="problem" role="alert">${message}</p>
${form && html`<section class="family" aria-label="Try again">${form}</section>`}
${back && html`<p><a class="back" href="${back}">Back to the calendar page</a></p>`}`;
}

export function familyRouter(opts: FamilyRouterOptions): Router {
  const router = Router();
  makeFamilyRoute(router, opts);
  qrDecoderRoute(router, opts);
  familyCalendarRoutes(router, opts);
  return router;
}

/** POST /family: the "add another child's link" form makes a family link and sends the parent to its page. */
function makeFamilyRoute(router: Router, opts: FamilyRouterOptions): void {
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 });
  router.post('/', form, async (req: Request, res: Response) => {
    res.locals.route = '/family';
    const body = (req.body ?? {}) as Record<string, unknown>;
    const from = typeof body.from === 'string' && looksLikeToken(body.from) ? body.from : null;
    const links = typeof body.links === 'string' ? body.links : '';
    const tokens = [...(from ? [from] : []), ...tokensIn(links).filter((t) => t !== from)];
    // A client past its allowance of unknown links learns nothing more from this form until it refills.
    const wait = opts.failedLookups?.retryAfter(req) ?? 0;
    if (wait > 0) return opts.failedLookups!.tooMany(req, res, wait);
    const made = await opts.families.create(tokens);
    if (!made.ok && made.unknown) opts.failedLookups?.fail(req, made.unknown);
    setSecurityHeaders(res, opts.securityHeaders);
    res.setHeader('Cache-Control', 'no-store');
    if (!made.ok) {
      // Where the form came from: a feed's page, or a family link's.
      let back: string | null = null;
      if (from)
        back = (await opts.families.get(from))
          ? `${opts.publicUrl}/family/${from}`
          : `${opts.publicUrl}/feeds/${from}`;
      // The form again, filled in with what was pasted: mend one line rather than paste every link again.
      const again = from
        ? familyForm({ from, action: `${opts.publicUrl}/family`, links: links.slice(0, 16_000) })
        : null;
      if (!again)
        return sendNotice(res, made.status, 'Family link not made', problemPage(made.message, back, null));
      // A calendar page's layout and CSP (its form posts here; its scanner reads QR codes), never cached.
      res.status(made.status);
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.setHeader('Content-Security-Policy', LANDING_CSP);
      res.setHeader('Permissions-Policy', LANDING_PERMISSIONS);
      const body = problemPage(made.message, back, again);
      res.end(parentLayout({ title: 'Family link not made', landing: { absences: false }, body }));
      return;
    }
    res.redirect(303, `${opts.publicUrl}/family/${made.token}`);
  });
}

/** The QR decoder the landing pages' scanner loads where the browser has no BarcodeDetector for QR codes. */
function qrDecoderRoute(router: Router, opts: FamilyRouterOptions): void {
  router.get('/qr-decoder.js', async (req: Request, res: Response) => {
    res.locals.route = '/family/qr-decoder.js';
    const decoder = await qrDecoder();
    setSecurityHeaders(res, opts.securityHeaders);
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.setHeader('Vary', 'Accept-Encoding');
    res.setHeader('ETag', decoder.etag);
    if (req.headers['if-none-match'] === decoder.etag) {
      res.status(304).end();
      return;
    }
    const gzip = chooseEncoding(req.headers['accept-encoding']?.replace(/\bbr\b/g, 'x-none')) === 'gzip';
    const body = gzip ? decoder.gzip : decoder.body;
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(body.length));
    res.status(200).end(body);
  });
}

/** GET /family/<token> (the page), /family/<token>.ics (the calendar) and one session of it as a file. */
function familyCalendarRoutes(router: Router, opts: FamilyRouterOptions): void {
  const now = opts.now ?? (() => new Date());
  const cacheControl = opts.cacheControl ?? 'private, max-age=300';
  const known = new LastKnown();

  // One coming session of the family's calendar as a file to add (event-download.ts).
  router.get('/:name/events/:file', async (req: Request<{ name: string; file: string }>, res: Response) => {
    const token = String(req.params.name ?? '');
    const sessionId = eventPath(res, '/family', token, String(req.params.file ?? ''));
    const feed = await opts.families.get(token);
    if (!feed) return unknownCapability(req, res, opts.failedLookups, opts.securityHeaders, opts.vouchesFor);
    serveEventFile(req, res, feed, sessionId, opts.securityHeaders);
  });

  router.get('/:name', async (req: Request<{ name: string }>, res: Response) => {
    const name = String(req.params.name ?? '');
    const { token, isIcs } = capabilityPath(res, '/family', name);
    const feed = await opts.families.get(token);
    if (!feed) return unknownCapability(req, res, opts.failedLookups, opts.securityHeaders, opts.vouchesFor);
    const reminder = reminderOf(req.query.reminder);
    if (reminder === null) return badReminder(res, opts.securityHeaders);
    setSecurityHeaders(res, opts.securityHeaders);
    if (!isIcs) await sendFamilyPage(req, res, opts, { token, feed, reminder, known, now: now() });
    else await sendFamilyCalendar(req, res, feed, reminder, cacheControl);
  });
}

async function sendFamilyPage(
  req: Request,
  res: Response,
  opts: FamilyRouterOptions,
  at: { token: string; feed: FamilyFeed; reminder: ReminderKey; known: LastKnown; now: Date },
): Promise<void> {
  const { token, feed } = at;
  const pageUrl = `${opts.publicUrl}/family/${token}`;
  // "Can't make it?" needs the store: while it cannot be reached, the page says so where the forms would be.
  const absences = await unlessUnreachable(
    () =>
      landingAbsences(req, res, opts, pageUrl, () => familyLink(token, feed), feed.upcoming, {
        schoolId: feed.schoolId,
        reports: feed.members.some((m) => m.scope === 'student'),
        now: at.now,
      }),
    undefined,
  );
  const html = await landingPage({
    scope: 'family',
    name: feed.name,
    description: feed.description,
    pageUrl,
    feedUrl: `${opts.publicUrl}/family/${token}.ics`,
    reminder: at.reminder,
    upcoming: feed.upcoming,
    eventCount: feed.eventCount,
    timeZone: feed.timeZone,
    updatedAt: await knownLastPull(at.known, opts.store, feed.schoolId),
    staleAfterMs: opts.staleAfterMs?.(feed.schoolId) ?? null,
    now: at.now,
    device: deviceOf(req.headers['user-agent']),
    liveGoogleCalendarId: null,
    showQr: opts.demo === true || !isLocalUrl(opts.publicUrl),
    familyFrom: token,
    familyAction: `${opts.publicUrl}/family`,
    members: feed.members.map((m) => m.label),
    lost: feed.lost.map(lostWords),
    ...(absences ? { absences } : {}),
  });
  sendLandingPage(res, html);
}

async function sendFamilyCalendar(
  req: Request,
  res: Response,
  feed: FamilyFeed,
  reminder: ReminderKey,
  cacheControl: string,
): Promise<void> {
  // Family calendars are kept as identity and gzip.
  const enc = chooseEncoding(req.headers['accept-encoding']?.replace(/\bbr\b/g, 'x-none'));
  const base = reminderEtag(feed.etag, reminder);
  res.setHeader('Content-Type', 'text/calendar; charset=utf-8');
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('ETag', etagFor(base, enc));
  res.setHeader('Last-Modified', feed.lastModified.toUTCString());
  if (notModified(req, feed, base)) {
    res.status(304).end();
    return;
  }
  const variant = reminder === 'none' ? null : reminderVariant(feed, reminder);
  const body = enc !== 'gzip' ? (variant ?? feed).body : variant ? await variant.gzip() : feed.gzip;
  if (enc === 'gzip') res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Disposition', 'inline; filename="family.ics"');
  res.setHeader('Content-Length', String(body.length));
  res.status(200).end(body);
}
