// Per request: who is asking (identify), who may pass (requireStaff, requireAdmin), whether a state-changing form
// is ours (checkCsrf), and the audit record of what they did. Also what the sign-in routes share with them: the
// settings (AuthContext), the throttle's refusal, and the admin token's comparison and session mark.
// Failures are throttled per client address, never per account.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { localPath } from '../identity/cookies.ts';
import type { StaffDirectory } from '../identity/directory.ts';
import type { OidcRelyingParty } from '../identity/oidc.ts';
import type { StaffSessions } from '../identity/staff-sessions.ts';
import type { FailureThrottle } from '../identity/throttle.ts';
import type { AuditRecord, StaffAccessRepository } from '../store/types.ts';
import { sendProblem } from './layouts.ts';
import { actorOf, csrfOf, isAdminSomewhere, type Principal, principalOf } from './staff-principal.ts';

/** The issuer recorded for sessions opened with the admin token through the break-glass form. */
export const ADMIN_TOKEN_ISSUER = 'rostercal:admin-token';

export type AuditInput = Partial<
  Omit<AuditRecord, 'id' | 'at' | 'actor' | 'clientAddress' | 'staffSession'>
> &
  Pick<AuditRecord, 'action'>;

/** The settings of staff access, read once by createStaffAuth. */
export interface AuthContext {
  /** Staff access writes only the audit log. */
  access: Pick<StaffAccessRepository, 'appendAudit'>;
  sessions: StaffSessions;
  directory: StaffDirectory;
  /** null: no identity provider configured (only the admin token gets in). */
  oidc: OidcRelyingParty | null;
  adminToken: string | null;
  throttle: FailureThrottle;
  publicUrl: URL;
  /** Cookies are Secure when PUBLIC_URL is https. */
  secure: boolean;
  /** Whom to ask, as a sentence for refusal pages. */
  askLine: string;
  /** How soon a change upstream reaches rostercal, as a sentence. */
  pullNote: string;
  onError?: (err: unknown) => void;
}

/**
 * What a session opened with the admin token keeps of it (as its subject): a hash, so that the session ends on any
 * server whose ADMIN_TOKEN is not that token any more (changed, or gone), and the store holds nothing that opens.
 */
export function adminTokenMark(token: string): string {
  return `admin-token:${createHash('sha256').update(`rostercal admin token session v1\0${token}`, 'utf8').digest('hex')}`;
}

export function sameSecret(given: string, expected: string): boolean {
  const d = (t: string) => createHash('sha256').update(t, 'utf8').digest();
  return timingSafeEqual(d(given), d(expected));
}

export function clientOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

export async function auditRequest(
  ctx: AuthContext,
  req: Request,
  res: Response,
  rec: AuditInput,
): Promise<void> {
  const p = principalOf(res);
  await ctx.access.appendAudit({
    at: new Date().toISOString(),
    action: rec.action,
    actor: p ? actorOf(p) : (rec.detail ?? 'unknown'),
    schoolId: rec.schoolId ?? null,
    teamId: rec.teamId ?? null,
    sessionId: rec.sessionId ?? null,
    template: rec.template ?? null,
    clientAddress: clientOf(req),
    staffSession: p?.session ? p.session.hash.slice(0, 12) : null,
    detail: rec.detail ?? null,
  });
}

export function tooMany(res: Response, retryAfter: number, html: boolean): void {
  res.set({ 'Retry-After': String(retryAfter), 'Cache-Control': 'no-store' });
  if (html)
    sendProblem(res, 429, 'Too many failed attempts', [
      `Too many failed sign-in attempts came from your network address. Try again in ${retryAfter} seconds.`,
      'This only affects this address: signing in from another network works as usual.',
    ]);
  else res.status(429).type('text').send('too many failed attempts from this address; try again later\n');
}

/** Sets res.locals.principal; answers 401/429 itself for a wrong or throttled bearer token. */
export async function identify(ctx: AuthContext, req: Request, res: Response, next: NextFunction) {
  try {
    const header = req.get('authorization');
    if (header !== undefined) return identifyBearer(ctx, header, req, res, next);
    const principal = await principalOfSession(ctx, req);
    if (principal) res.locals.principal = principal;
    next();
  } catch (err) {
    next(err);
  }
}

function identifyBearer(ctx: AuthContext, header: string, req: Request, res: Response, next: NextFunction) {
  const client = clientOf(req);
  const wait = ctx.throttle.retryAfter(client);
  if (wait > 0) return tooMany(res, wait, false);
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (ctx.adminToken && m && sameSecret(m[1]!, ctx.adminToken)) {
    res.locals.principal = { kind: 'admin-token', session: null } satisfies Principal;
    return next();
  }
  ctx.throttle.fail(client);
  res.set({ 'Cache-Control': 'no-store', 'WWW-Authenticate': 'Bearer realm="rostercal staff"' });
  res.status(401).type('text').send('wrong or unknown bearer token\n');
}

/** The principal of the request's session cookie, if it still opens anything. */
async function principalOfSession(ctx: AuthContext, req: Request): Promise<Principal | null> {
  const current = await ctx.sessions.current(req);
  if (!current) return null;
  if (current.session.issuer === ADMIN_TOKEN_ISSUER) {
    // Opened with a token this server no longer has (changed, or gone): it opens nothing.
    if (ctx.adminToken && current.session.subject === adminTokenMark(ctx.adminToken))
      return { kind: 'admin-token', session: current };
    return null;
  }
  const found = await ctx.directory.lookup(current.session.email);
  // Frozen or removed upstream since sign-in: the session no longer opens anything.
  if (!found.memberships.length) return null;
  return {
    kind: 'person',
    email: current.session.email,
    displayName: current.session.displayName,
    session: current,
    memberships: found.memberships,
  };
}

function wantsHtml(req: Request): boolean {
  return req.method === 'GET' && req.accepts(['text', 'html', 'json']) === 'html';
}

/** Signed-in staff or the admin token; otherwise sign-in (browsers) or 401. */
export function requireStaff(req: Request, res: Response, next: NextFunction) {
  if (principalOf(res)) return next();
  res.set('Cache-Control', 'no-store');
  if (wantsHtml(req)) {
    res.redirect(303, `/auth/login?returnTo=${encodeURIComponent(localPath(req.originalUrl))}`);
    return;
  }
  res.set('WWW-Authenticate', 'Bearer realm="rostercal staff"');
  res.status(401).type('text').send('staff sign-in required\n');
}

/** Admins of at least one school, or the admin token; signed-in others get 403. */
export function requireAdmin(ctx: AuthContext, req: Request, res: Response, next: NextFunction) {
  const p = principalOf(res);
  if (!p) return requireStaff(req, res, next);
  if (isAdminSomewhere(p)) return next();
  sendProblem(
    res,
    403,
    'For administrators only',
    [
      'This page is for the school’s rostercal administrators. Your teams are on “My teams”.',
      `Administrators are the staff marked as admins in the school’s extracurricular system. ${ctx.askLine}`,
    ],
    { href: '/staff', label: 'My teams' },
  );
}

/** For state-changing forms: the CSRF token matches the session and the Origin (if sent) is ours. */
export function checkCsrf(ctx: AuthContext, req: Request, res: Response): boolean {
  const p = principalOf(res);
  const origin = req.get('origin');
  const own = `${req.protocol}://${req.get('host')}`;
  // Browsers send `Origin: null` for forms on our own pages (Referrer-Policy: no-referrer): no evidence either
  // way, so the session's CSRF token below decides.
  if (origin && origin !== 'null' && origin !== ctx.publicUrl.origin && origin !== own) return false;
  const given = (req.body as Record<string, unknown> | undefined)?.csrf;
  if (!p) return false;
  // The admin-token bearer is not a browser: no cookie, no CSRF.
  if (p.kind === 'admin-token' && !p.session) return true;
  const expected = csrfOf(p);
  return typeof given === 'string' && expected !== null && sameSecret(given, expected);
}
