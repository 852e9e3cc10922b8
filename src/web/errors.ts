// What the app answers when a request goes wrong, in one place: a client's mistake (a malformed escape in the
// path, a body too large, a charset or content type we do not read) is a 4xx with the usual security headers,
// never a 500; and no log line of it carries a capability token. Express's own messages for these errors quote
// the raw path parameter (`Failed to decode param '<token>%E0%A4.ics'`), so they are never logged as they are.
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { scrubSecrets } from '../log.ts';
import { storeErrorText } from '../log-text.ts';
import { isStoreUnreachable, STORE_RETRY_AFTER_S } from '../store/unreachable.ts';
import { terminalSafe } from '../terminal.ts';
import { html } from '../util/html.ts';
import { sendAdminPage, sendNotice, sendProblem } from './layouts.ts';
import { setSecurityHeaders } from './security.ts';

/** A path segment this long may be a capability (feed and family tokens are 32 characters); logs keep 6. */
const LONG_SEGMENT = 16;

/**
 * The path as it may be logged: every segment long enough to be a token (whatever route it came in on, in any
 * case, percent-encoded or not) keeps only its first 6 characters. The query string is dropped.
 */
export function redactPath(path: string): string {
  const bare = path.split(/[?#]/, 1)[0] ?? '';
  return bare
    .split('/')
    .map((s) => (s.length >= LONG_SEGMENT ? `${s.slice(0, 6)}…` : s))
    .join('/');
}

const CLIENT_MESSAGES: Record<number, string> = {
  400: 'Bad request\n',
  500: 'Internal error\n',
  413: 'Too much text: the request body is larger than this form accepts\n',
  415: 'Unsupported request body: send a form (application/x-www-form-urlencoded, UTF-8)\n',
};

/** The status of an error that is the client's mistake (body-parser, Express's param decoding), or null. */
export function clientErrorStatus(err: unknown): number | null {
  if (err instanceof URIError) return 400;
  const e = err as { status?: unknown; statusCode?: unknown; expose?: unknown } | null;
  const status = typeof e?.status === 'number' ? e.status : e?.statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}

/**
 * Every POST this app takes is an HTML form. A body of another type is refused with 415 before any route reads
 * it (a route would otherwise see an empty form and answer as if fields were missing).
 */
export function formBodiesOnly(securityHeaders: readonly [string, string][]) {
  return function formBodiesOnlyMiddleware(req: Request, res: Response, next: NextFunction) {
    if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return next();
    const length = req.headers['content-length'];
    const hasBody =
      req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
    if (!hasBody) return next();
    const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (type === 'application/x-www-form-urlencoded') return next();
    res.locals.route ??= 'unsupported-body';
    // The body is not read: close the connection rather than leave it to be drained.
    res.setHeader('Connection', 'close');
    answer(req, res, 415, securityHeaders);
  };
}

/** Staff and admins' paths (case-insensitive like Express's routing): their layout, not the parents'. */
const STAFF_PATH = /^\/(?:admin|staff|auth|rosters|demo-idp)(?:\/|$)/i;
const ADMIN_PATH = /^\/admin(?:\/|$)/i;

export const isStaffPath = (path: string): boolean => STAFF_PATH.test(path);

/**
 * A path under /admin, /staff… that no route answers: a 404 in the staff (or admin) layout. The parents' "This
 * calendar link does not work" is for mistyped calendar links and would send staff to the school office.
 */
export function staffNotFound(req: Request, res: Response): void {
  const title = 'No such page';
  const text = 'There is no page at this address. Check the address, or start again from the link below.';
  if (ADMIN_PATH.test(req.path))
    sendAdminPage(res, {
      title,
      status: 404,
      body: html`<div class="card" role="alert"><h1>${title}</h1><p>${text}</p><p><a class="btn primary" href="/admin">Admin</a></p></div>`,
    });
  else sendProblem(res, 404, title, [text], { href: '/staff', label: 'My teams' });
}

const REFUSAL_TITLES: Record<number, string> = {
  400: 'This cannot be made',
  403: 'Not available to you',
  404: 'Not found',
};

/**
 * A refusal on a staff path: a page in the staff layout for a browser (it asks for HTML first), one line of text
 * for anything else (curl, scripts). Either way the words are cleaned as the CLI cleans what it prints
 * (terminal.ts): they may quote upstream text (a session's title), whose escape sequences, OSC, BEL or U+202E
 * would otherwise reach whoever reads the answer in a terminal.
 */
export function sendRefusal(req: Request, res: Response, status: number, message: string): void {
  const words = terminalSafe(message).trim();
  res.set('Cache-Control', 'no-store');
  if (req.accepts(['text/plain', 'text/html']) === 'text/html') {
    const sentence = `${words.charAt(0).toUpperCase()}${words.slice(1)}${/[.!?]$/.test(words) ? '' : '.'}`;
    sendProblem(res, status, REFUSAL_TITLES[status] ?? 'Request refused', [sentence], {
      href: '/staff',
      label: 'My teams',
    });
    return;
  }
  res.status(status).type('text').send(`${words}\n`);
}

/**
 * The store cannot be reached and memory holds no answer (store/unreachable.ts): 503 with Retry-After, never 500.
 * A calendar app gets a line of text; a person a page in the layout of the path, saying it is temporary.
 */
function storeUnreachable(req: Request, res: Response): void {
  res.setHeader('Retry-After', String(STORE_RETRY_AFTER_S));
  const title = 'Temporarily unavailable';
  const text =
    'This page is temporarily unavailable: the service cannot reach its database just now. Nothing is lost; try again in a minute.';
  if (/\.(ics|js)$/i.test(req.path)) {
    res.status(503).setHeader('Cache-Control', 'no-store');
    res.type('text/plain').end('Temporarily unavailable; try again later.\n');
  } else if (ADMIN_PATH.test(req.path))
    sendAdminPage(res, {
      title,
      status: 503,
      body: html`<div class="card" role="alert"><h1>${title}</h1><p>${text}</p></div>`,
    });
  else if (isStaffPath(req.path)) sendProblem(res, 503, title, [text]);
  else
    sendNotice(
      res,
      503,
      title,
      html`<h1>${title}</h1><p>This calendar is temporarily unavailable: the school's calendar service cannot reach its database just now. Your calendar app keeps what it has and tries again by itself; if you opened this page, try again in a minute.</p>`,
    );
}

/** Whether the client asks for a page: it lists HTML before plain text (browsers); calendar apps and curl do not. */
export function wantsPage(req: Request): boolean {
  return req.accepts(['text/plain', 'text/html']) === 'text/html';
}

/**
 * Who a parent is sent to: the school by name where the service holds one school (res.locals.schoolNames,
 * app.ts); where it holds several, a page that cannot tell whose link it was names none of them.
 */
export function schoolOffice(res: Response): string {
  const names = (res.locals.schoolNames as readonly string[] | undefined) ?? [];
  return names.length === 1 ? `the office of ${names[0]}` : 'your child\u2019s school office';
}

/**
 * A page that says why a request was not answered, in the layout of its path: admins', staff's, or the parents'
 * notice (every other path: calendar pages and links). Never cached.
 */
export function sendErrorPage(
  req: Request,
  res: Response,
  status: number,
  title: string,
  paragraphs: readonly string[],
): void {
  res.setHeader('Cache-Control', 'no-store');
  const body = html`<h1>${title}</h1>${paragraphs.map((p) => html`<p>${p}</p>`)}`;
  if (ADMIN_PATH.test(req.path))
    sendAdminPage(res, { title, status, body: html`<div class="card" role="alert">${body}</div>` });
  else if (isStaffPath(req.path)) sendProblem(res, status, title, [...paragraphs]);
  else sendNotice(res, status, title, body);
}

/** What a browser is told of a client's mistake (or our fault), by status, in words for whoever meets it. */
function errorPage(req: Request, res: Response, status: number): { title: string; paragraphs: string[] } {
  const parent = !isStaffPath(req.path);
  switch (status) {
    case 400:
      return {
        title: 'This address does not work',
        paragraphs: [
          'The address has a mistake in it: it may have been copied incompletely or changed by hand.',
          parent
            ? `Open the link you were sent again; if it still does not work, ask ${schoolOffice(res)} for it.`
            : 'Open the link you followed again, or start from your teams.',
        ],
      };
    case 413:
      return {
        title: 'Too much text',
        paragraphs: [
          'The form sent more text than it accepts. Go back, shorten what you typed (or paste fewer links), and send it again.',
        ],
      };
    case 415:
      return {
        title: 'This form could not be read',
        paragraphs: [
          'The form was sent in a way this service does not read. Go back, reload the page and send the form from it again.',
        ],
      };
    case 500:
      return {
        title: 'Something went wrong',
        paragraphs: [
          'This page could not be shown because of a fault in the school\u2019s calendar service. Nothing you did caused it.',
          parent
            ? `Try again in a minute; if it keeps happening, tell ${schoolOffice(res)}.`
            : 'Try again in a minute; if it keeps happening, tell whoever runs rostercal for the school.',
        ],
      };
    default:
      return {
        title: 'Request refused',
        paragraphs: ['This request cannot be answered. Go back and try again from the page you came from.'],
      };
  }
}

/**
 * A refused request (a client's mistake, or a 500): a page in its path's layout for a browser, one line of text
 * for anything else (a calendar app fetching its feed, curl), with the security headers either way.
 */
function answer(req: Request, res: Response, status: number, pairs?: readonly [string, string][]): void {
  if (pairs) setSecurityHeaders(res, pairs);
  // A form too large is a page whatever it asks for: only browsers post forms here.
  if (wantsPage(req) || status === 413) {
    const page = errorPage(req, res, status);
    sendErrorPage(req, res, status, page.title, page.paragraphs);
    return;
  }
  res.status(status);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.end(CLIENT_MESSAGES[status] ?? 'Request refused\n');
}

/**
 * The app's last error handler. A client's mistake answers its 4xx and logs at info without the error's text
 * (which may quote the path); anything else is a 500 logged with the message scrubbed of secrets.
 */
export function errorHandler(opts: {
  logger: Logger;
  securityHeaders: readonly [string, string][];
  /** Told of every error that became a 500 (readiness learns of a damaged store from it). */
  onServerError?: (err: unknown) => void;
}) {
  return function handleError(err: unknown, req: Request, res: Response, _next: NextFunction) {
    const path = redactPath(req.originalUrl);
    const status = clientErrorStatus(err);
    if (status !== null) {
      const type = (err as { type?: unknown }).type;
      opts.logger.info(
        {
          status,
          reason: typeof type === 'string' ? type : err instanceof URIError ? 'uri' : 'client',
          path,
        },
        'request refused',
      );
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.locals.route ??= 'refused';
      return answer(req, res, status, opts.securityHeaders);
    }
    if (isStoreUnreachable(err)) {
      opts.logger.warn(
        { path, err: storeErrorText(err) },
        'request answered 503: the store cannot be reached',
      );
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.locals.route ??= 'store-unreachable';
      setSecurityHeaders(res, opts.securityHeaders);
      return storeUnreachable(req, res);
    }
    opts.onServerError?.(err);
    opts.logger.error(
      {
        err:
          err instanceof Error
            ? { message: scrubSecrets(err.message), stack: scrubSecrets(err.stack ?? '') }
            : scrubSecrets(String(err)),
        path,
      },
      'request failed',
    );
    if (res.headersSent) {
      res.destroy();
      return;
    }
    answer(req, res, 500, opts.securityHeaders);
  };
}
