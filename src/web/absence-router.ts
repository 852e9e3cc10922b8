// POST <page>/absences (report) and <page>/absences/undo, for a child's page (/feeds/<token>) and a family page
// (/family/<token>). The form works without script: a success redirects back to the page (303), which shows what
// was reported; a refusal is a small page with its status (403, 404, 409, 429, 502, 503) that says what happened
// and leads back. Unknown, rotated and revoked links get the same 404 page as a feed would.
import express, { type Request, type Response, Router } from 'express';
import { MAX_FAMILY_REASON } from '../domain/family-absence.ts';
import type { FamilyAbsences, Outcome, ReportingLink } from '../families/absences.ts';
import type { FamilyLinks } from '../feeds/family.ts';
import type { FeedService } from '../feeds/feed-service.ts';
import { resolveFeedToken, tokenForLog } from '../feeds/tokens.ts';
import type { FeedToken, Store } from '../store/types.ts';
import { isStoreUnreachable, STORE_RETRY_AFTER_S } from '../store/unreachable.ts';
import { html, type SafeHtml } from '../util/html.ts';
import type { Done } from './absence-done.ts';
import { crossSiteProblem } from './absence-form.ts';
import { childLink, familyLink } from './absence-links.ts';
import { UNSURE_RETRY_AFTER_S, unknownCapability } from './feeds-router.ts';
import { sendNotice } from './layouts.ts';
import type { FailedLookups } from './rate-limit.ts';
import { setSecurityHeaders } from './security.ts';

export interface AbsenceRouterOptions {
  store: Pick<Store, 'records' | 'links'>;
  absences: FamilyAbsences;
  families: FamilyLinks;
  /** Only to read the feed a page belongs to. */
  feeds: Pick<FeedService, 'get'>;
  publicUrl: string;
  securityHeaders: readonly [string, string][];
  failedLookups?: FailedLookups;
  vouchesFor?: (record: FeedToken | null) => Promise<boolean>;
}

function problemPage(title: string, message: string, back: string): SafeHtml {
  return html`<h1>${title}</h1><p class="problem" role="alert">${message}</p>
<p><a href="${back}">Back to the calendar page</a></p>`;
}

type Act = 'report' | 'undo';

/** A report as posted, to send again. */
interface Again {
  csrf: string;
  sessionId: number;
  studentId: number;
  words: string;
}

/**
 * An act's outcome, or, when it throws past the families' own answers (a fault after the act was recorded), that
 * it is not known: the upstream write may have been made. Never "not reported" or "not undone", which is not known
 * either. Sending again is safe: an act is decided once in the store.
 */
async function settled(act: Act, run: () => Promise<Outcome>): Promise<{ outcome: Outcome; title?: string }> {
  try {
    return { outcome: await run() };
  } catch {
    const report = act === 'report';
    return {
      title: `It is not known whether the absence was ${report ? 'reported' : 'undone'}`,
      outcome: {
        ok: false,
        status: 503,
        retryAfterS: 30,
        message: report
          ? 'It is not known whether the absence was recorded: the calendar could not check just now. Open the calendar page in a minute to see; if it is not shown there, send it again below.'
          : 'It is not known whether the absence was undone: the calendar could not check just now. Open the calendar page in a minute to see whether it still stands.',
      },
    };
  }
}

/**
 * The link could not be looked up (the store out of reach, or this process unable to vouch for it): nothing was
 * recorded or sent, for no act starts before its link is known, so the family is told so, and may send it again.
 */
function notReached(act: Act, why: 'unreachable' | 'unsure'): Outcome {
  const cause =
    why === 'unreachable'
      ? 'The calendar cannot reach its records just now'
      : 'This calendar is unavailable for a while';
  const when = why === 'unreachable' ? 'in a minute' : 'later';
  return {
    ok: false,
    status: 503,
    retryAfterS: why === 'unreachable' ? STORE_RETRY_AFTER_S : UNSURE_RETRY_AFTER_S,
    message:
      act === 'report'
        ? `${cause}, so nothing was reported. Please send it again ${when}, or tell the coach directly.`
        : `${cause}, so nothing was undone: the absence still stands. Please try again ${when}, or tell the coach directly.`,
  };
}

/**
 * The report's form once more, filled in as it was posted, where trying again can help (the school's system busy
 * or away, the store unsure): a refusal page that led back to an empty form lost what was typed (an outside tester).
 */
function againForm(pageUrl: string, a: Again): SafeHtml {
  return html`<form method="post" action="${`${pageUrl}/absences`}"><input type="hidden" name="csrf" value="${a.csrf}"><input type="hidden" name="session" value="${a.sessionId}"><input type="hidden" name="student" value="${a.studentId}"><p><label for="again-reason">Reason (optional, the coach sees it)</label><br><input type="text" id="again-reason" name="reason" maxlength="${MAX_FAMILY_REASON}" value="${a.words.slice(0, MAX_FAMILY_REASON)}" autocomplete="off"></p><p><button type="submit">Try again: can\u2019t make it</button></p></form>`;
}

function idOf(v: unknown): number | null {
  if (typeof v !== 'string' || !/^\d{1,15}$/.test(v)) return null;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : null;
}

/** A report's fields as posted, or null when the session or the child is missing. */
function postedReport(body: Record<string, unknown>): Again | null {
  const sessionId = idOf(body.session);
  const studentId = idOf(body.student);
  if (sessionId === null || studentId === null) return null;
  const words = typeof body.reason === 'string' ? body.reason : '';
  return { csrf: String(body.csrf), sessionId, studentId, words };
}

/** What to answer an act with: its outcome, the form to send again (a report), and a title other than "not …". */
interface Reply {
  act: Act;
  pageUrl: string;
  outcome: Outcome;
  again?: Again | undefined;
  title?: string | undefined;
}

/** A success goes back to the page at the session (303); a refusal is a small page, with the form where it helps. */
function sendOutcome(
  res: Response,
  securityHeaders: readonly [string, string][],
  { act, pageUrl, outcome, again, title: failedTitle }: Reply,
): void {
  setSecurityHeaders(res, securityHeaders);
  res.setHeader('Cache-Control', 'no-store');
  if (outcome.ok) {
    // A repeated report is reported all the same; a repeated undo says so (it undid nothing that stands now).
    const done: Done = outcome.kind === 'already-reported' ? 'reported' : outcome.kind;
    // The session in the query too (a fragment never reaches the server): the page says what was done there,
    // where it lands, not above the list out of sight.
    const where =
      outcome.sessionId === null
        ? '#upcoming-h'
        : `&session=${outcome.sessionId}#session-${outcome.sessionId}`;
    res.redirect(303, `${pageUrl}?done=${done}${where}`);
    return;
  }
  if (outcome.retryAfterS) res.setHeader('Retry-After', String(outcome.retryAfterS));
  const title =
    failedTitle ?? (act === 'report' ? 'The absence was not reported' : 'The absence was not undone');
  const retry = again && outcome.status >= 500 ? againForm(pageUrl, again) : null;
  const body = html`${problemPage(title, outcome.message, pageUrl)}${retry}`;
  sendNotice(res, outcome.status, title, body, retry ? new URL(pageUrl).origin : undefined);
}

/** A link by its token: what it may do, or that it is unknown (404) or cannot be vouched for now (503). */
type Found = ReportingLink | null | 'unknown' | 'unsure';

function linkResolvers(
  opts: AbsenceRouterOptions,
): Record<'/feeds' | '/family', (token: string) => Promise<Found>> {
  return {
    // Never the remembered token: a link rotated a moment ago on another replica acts no more.
    '/feeds': async (token) => {
      const record = await resolveFeedToken(opts.store, token);
      if (!record) return 'unknown';
      if (opts.vouchesFor && !(await opts.vouchesFor(record))) return 'unsure';
      const feed = await opts.feeds.get(record.schoolId, record.scope, record.scopeId);
      return feed ? childLink(opts.store, record, feed) : 'unknown';
    },
    '/family': async (token) => {
      const feed = await opts.families.get(token);
      return feed ? familyLink(token, feed) : 'unknown';
    },
  };
}

export function absenceRouter(opts: AbsenceRouterOptions): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '4kb', parameterLimit: 8 });

  const answer = (
    res: Response,
    act: Act,
    pageUrl: string,
    outcome: Outcome,
    again?: Again,
    title?: string,
  ) => sendOutcome(res, opts.securityHeaders, { act, pageUrl, outcome, again, title });

  async function act(
    req: Request,
    res: Response,
    act: Act,
    pageUrl: string,
    link: ReportingLink | null,
  ): Promise<void> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!link?.children.length)
      return answer(res, act, pageUrl, {
        ok: false,
        status: 403,
        message: 'Absences can be reported only from a child\u2019s own calendar page or a family page.',
      });
    const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
    const problem = crossSiteProblem(req, opts.publicUrl, body.csrf);
    if (problem !== null) {
      // The header's own value is the sender's words: name the kind of problem only.
      const why = problem.startsWith('Sec-Fetch-Site') ? 'a cross-site request' : problem;
      await opts.absences.refused(link, address, `${act} refused (the form: ${why})`);
      return answer(res, act, pageUrl, {
        ok: false,
        status: 403,
        message:
          'This form has expired or did not come from the calendar page. Open the calendar page again and try once more.',
      });
    }
    if (act === 'undo') {
      const absenceId = idOf(body.absence);
      if (absenceId === null)
        return answer(res, act, pageUrl, {
          ok: false,
          status: 400,
          message: 'Which absence to undo is missing.',
        });
      const { outcome, title } = await settled(act, () => opts.absences.undo(link, { absenceId, address }));
      return answer(res, act, pageUrl, outcome, undefined, title);
    }
    const again = postedReport(body);
    if (again === null)
      return answer(res, act, pageUrl, {
        ok: false,
        status: 400,
        message: 'Choose the child and the session, then confirm.',
      });
    const { sessionId, studentId, words } = again;
    const { outcome, title } = await settled(act, () =>
      opts.absences.report(link, { studentId, sessionId, words, address }),
    );
    answer(res, act, pageUrl, outcome, again, title);
  }

  /**
   * The link's lookup failed: nothing was done. A report posted from our own page gets its form back as sent; a
   * post that did not come from the page (its form check fails) is told the same and given nothing to send.
   */
  function notLookedUp(
    req: Request,
    res: Response,
    act: Act,
    pageUrl: string,
    why: 'unreachable' | 'unsure',
  ) {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const ours = crossSiteProblem(req, opts.publicUrl, body.csrf) === null;
    const again = act === 'report' && ours ? postedReport(body) : null;
    answer(res, act, pageUrl, notReached(act, why), again ?? undefined);
  }

  const resolvers = linkResolvers(opts);

  for (const [base, resolve] of Object.entries(resolvers))
    for (const kind of ['report', 'undo'] as const) {
      const path = `${base}/:token/absences${kind === 'undo' ? '/undo' : ''}`;
      router.post(path, form, async (req: Request<{ token: string }>, res: Response) => {
        const token = String(req.params.token ?? '');
        res.locals.route = path;
        res.locals.logPath = path.replace(':token', tokenForLog(token));
        const pageUrl = `${opts.publicUrl}${base}/${token}`;
        let found: Found;
        try {
          found = await resolve(token);
        } catch (err) {
          // Anything else is our fault, for the error handler to log and answer.
          if (!isStoreUnreachable(err)) throw err;
          return notLookedUp(req, res, kind, pageUrl, 'unreachable');
        }
        if (found === 'unsure') return notLookedUp(req, res, kind, pageUrl, 'unsure');
        if (found === 'unknown')
          return unknownCapability(req, res, opts.failedLookups, opts.securityHeaders, opts.vouchesFor);
        await act(req, res, kind, pageUrl, found);
      });
    }

  return router;
}
