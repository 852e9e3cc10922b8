// Staff access for the web, put together from its parts: who is asking and who may pass (staff-request-auth.ts),
// the sign-in routes (OpenID Connect: /auth/login → the school's identity provider → /auth/callback; POST
// /auth/logout: staff-sign-in.ts), the break-glass admin-token form (/admin/login: admin-token-sign-in.ts), CSRF
// checks for state-changing forms, and audit records. Failures are throttled per client address, never per account.
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { StaffDirectory } from '../identity/directory.ts';
import type { OidcRelyingParty } from '../identity/oidc.ts';
import type { StaffSessions } from '../identity/staff-sessions.ts';
import { FailureThrottle } from '../identity/throttle.ts';
import type { Store } from '../store/types.ts';
import { addAdminTokenRoutes } from './admin-token-sign-in.ts';
import { sendRefusal } from './errors.ts';
import {
  type AuditInput,
  type AuthContext,
  auditRequest,
  checkCsrf,
  identify,
  requireAdmin,
  requireStaff,
} from './staff-request-auth.ts';
import { addSignInRoutes } from './staff-sign-in.ts';

export {
  ADMIN_TOKEN_ACTOR,
  accessIn,
  actorOf,
  csrfOf,
  isAdminSomewhere,
  type Principal,
  principalOf,
} from './staff-principal.ts';
export type { AuditInput };

export interface StaffAuthOptions {
  store: Pick<Store, 'access'>;
  sessions: StaffSessions;
  directory: StaffDirectory;
  /** null: no identity provider configured (only the admin token gets in). */
  oidc: OidcRelyingParty | null;
  adminToken: string | null;
  publicUrl: string;
  throttle?: FailureThrottle;
  /** Shown on refusal pages: whom to ask (e.g. "the IT office, it@school.org"). */
  helpContact?: string | null;
  /** Minutes between pulls, for "a change reaches rostercal within …". */
  pullEveryMinutes?: number;
  onError?: (err: unknown) => void;
}

export interface StaffAuth {
  /** Sets res.locals.principal; answers 401/429 itself for a wrong or throttled bearer token. */
  identify: RequestHandler;
  /** Signed-in staff or the admin token; otherwise sign-in (browsers) or 401. */
  requireStaff: RequestHandler;
  /** Admins of at least one school, or the admin token; signed-in others get 403. */
  requireAdmin: RequestHandler;
  /** /auth/login, /auth/callback, /auth/logout, /admin/login. */
  router: express.Router;
  /** For state-changing forms: the CSRF token matches the session and the Origin (if sent) is ours. */
  checkCsrf(req: Request, res: Response): boolean;
  audit(req: Request, res: Response, record: AuditInput): Promise<void>;
  /** The audit record of a view: a HEAD shows nothing (Express answers it with the GET route), so it records none. */
  auditView(req: Request, res: Response, record: AuditInput): Promise<void>;
  throttle: FailureThrottle;
}

export function createStaffAuth(opts: StaffAuthOptions): StaffAuth {
  const publicUrl = new URL(opts.publicUrl);
  const ctx: AuthContext = {
    access: opts.store.access,
    sessions: opts.sessions,
    directory: opts.directory,
    oidc: opts.oidc,
    adminToken: opts.adminToken || null,
    throttle: opts.throttle ?? new FailureThrottle(),
    publicUrl,
    secure: publicUrl.protocol === 'https:',
    askLine: opts.helpContact
      ? `Ask ${opts.helpContact}.`
      : 'Ask the school’s rostercal administrator (the school office knows who that is).',
    pullNote: `A change made there reaches rostercal at the next pull (within about ${opts.pullEveryMinutes ?? 10} minutes).`,
    onError: opts.onError,
  };
  const router = express.Router();
  const form = express.urlencoded({ extended: false, limit: '4kb' });
  addSignInRoutes(ctx, router, form);
  addAdminTokenRoutes(ctx, router, form);
  return {
    identify: (req, res, next) => identify(ctx, req, res, next),
    requireStaff,
    requireAdmin: (req, res, next) => requireAdmin(ctx, req, res, next),
    router,
    checkCsrf: (req, res) => checkCsrf(ctx, req, res),
    audit: (req, res, rec) => auditRequest(ctx, req, res, rec),
    auditView: async (req, res, rec) => {
      if (req.method !== 'HEAD') await auditRequest(ctx, req, res, rec);
    },
    throttle: ctx.throttle,
  };
}

/**
 * Express error-path helper: answers a refused request for a resource without revealing anything about it (a
 * page in the staff layout for a browser, a line of text for anything else: errors.ts sendRefusal).
 */
export function forbidden(req: Request, res: Response, what: string): void {
  sendRefusal(req, res, 403, what);
}
