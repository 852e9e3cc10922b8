// Staff-only roster routes:
//   GET /rosters/teams/:teamId.pdf?template=NAME&session=ID&school=ID  the PDF (inline)
//   GET /rosters/templates                                           the available templates (JSON)
// A person gets only the teams their role allows (403 with no byte of the roster otherwise); templates with
// medical or guardian columns only for the roles the school allows. Every PDF served is audited first.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { EventTemplates } from '../calendar/templates.ts';
import { type SchoolRef, StaffDirectory } from '../identity/directory.ts';
import {
  canPrintSensitive,
  canSeeTeam,
  DEFAULT_SENSITIVE_ROLES,
  isSensitiveTemplate,
  type SensitiveRole,
} from '../identity/roles.ts';
import { DEFAULT_SESSION_SETTINGS, StaffSessions } from '../identity/staff-sessions.ts';
import {
  defaultTemplateName,
  generateRoster,
  loadAllTemplates,
  RosterError,
  templateFor,
} from '../rosters/index.ts';
import type { Store } from '../store/types.ts';
import { sendRefusal } from './errors.ts';
import { sendJson } from './layouts.ts';
import { createStaffAuth, forbidden, type Principal, principalOf, type StaffAuth } from './staff-auth.ts';

/** What rosters read of a school's configuration. */
export interface RosterSchool extends SchoolRef {
  eventTemplates?: EventTemplates;
  rosters: { sensitive: boolean };
  /** How far back the pulls keep sessions current: staff open a past session until daysBack after it ended. */
  syncWindow?: { daysBack: number };
}

/** A school without a syncWindow in its configuration: the configuration's default. */
const DEFAULT_PAST_DAYS = 60;

/** How many days after it ended staff may still open a session's page or sheets (rosters/data.ts pastDays). */
export function pastDaysOf(school: RosterSchool): number {
  return school.syncWindow?.daysBack ?? DEFAULT_PAST_DAYS;
}

export interface RostersRouterOptions {
  store: Pick<Store, 'records' | 'feeds' | 'access'>;
  /** The schools: with exactly one, `?school=` may be left out. */
  config: { schools: readonly RosterSchool[] };
  /** ADMIN_TOKEN; ignored when `auth` is given (then only the bearer token gets in). */
  adminToken?: string | null;
  /** The shared staff auth; its identify middleware must run before this router (createStaffAuth). */
  auth?: StaffAuth;
  /** Who may print templates with medical or guardian columns; default admins and the team's assigned staff. */
  sensitiveRoles?: readonly SensitiveRole[];
  /** The school's own roster templates (configuration: ROSTER_TEMPLATES_DIR). */
  templatesDir?: string | null;
  /** Called for unexpected failures (a logger's error method). */
  onError?: (err: unknown, req: Request) => void;
  /** The clock a session's age is judged by (default the real one). */
  now?: () => Date;
}

function queryString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function idParam(name: string, value: string | undefined): number | null {
  if (value === undefined) return null;
  if (!/^\d{1,15}$/.test(value)) throw new RosterError('unknown-team', `${name} must be a number`, 400);
  return Number(value);
}

/** ASCII file name for Content-Disposition (the full name goes in filename*). */
function disposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

export function createRostersRouter(opts: RostersRouterOptions): express.Router {
  const auth =
    opts.auth ??
    createStaffAuth({
      store: opts.store,
      sessions: new StaffSessions(opts.store, { ...DEFAULT_SESSION_SETTINGS, secure: true }),
      directory: new StaffDirectory(opts.store, opts.config.schools),
      oidc: null,
      adminToken: opts.adminToken ?? null,
      publicUrl: 'https://localhost',
    });
  const router = express.Router();
  if (!opts.auth) router.use(auth.identify, auth.router);
  rosterPdfRoute(router, auth, opts);
  templatesRoute(router, auth, opts);
  return router;
}

const noStore = (_req: Request, res: Response, next: NextFunction) => {
  res.set('Cache-Control', 'no-store');
  next();
};

/** GET /rosters/teams/:teamId.pdf: the roster, once the principal may have it and the request is audited. */
function rosterPdfRoute(router: express.Router, auth: StaffAuth, opts: RostersRouterOptions): void {
  const sensitiveRoles = opts.sensitiveRoles ?? DEFAULT_SENSITIVE_ROLES;
  const templatesDir = opts.templatesDir === undefined ? undefined : opts.templatesDir;
  const defaultSchool = opts.config.schools.length === 1 ? opts.config.schools[0]!.id : null;

  router.get('/rosters/teams/:teamId.pdf', noStore, auth.requireStaff, async (req, res, next) => {
    // What was asked, for the audit record of a refusal (who is the request's principal; why, the refusal).
    const asked: {
      schoolId: string | null;
      teamId: number | null;
      sessionId: number | null;
      template: string | null;
    } = { schoolId: null, teamId: null, sessionId: null, template: null };
    const refused = (why: string) =>
      auth.audit(req, res, { action: 'roster-refused', ...asked, detail: why });
    try {
      const teamId = idParam('team', queryString(req.params.teamId) ?? '')!;
      asked.teamId = teamId;
      const sessionId = idParam('session', queryString(req.query.session));
      asked.sessionId = sessionId;
      const schoolId = queryString(req.query.school) ?? defaultSchool;
      const school = opts.config.schools.find((s) => s.id === schoolId);
      if (school) asked.schoolId = school.id;
      asked.template = queryString(req.query.template)?.slice(0, 100) ?? null;
      const p = principalOf(res) as Principal;
      // To a member of staff, a school that does not exist answers as one they are not staff of: which schools
      // this service holds is not theirs to learn. The admin token may know.
      if (!school && schoolId !== null && p.kind !== 'admin-token') {
        await refused(NOT_STAFF);
        return forbidden(req, res, NOT_STAFF);
      }
      if (!school)
        throw schoolId === null
          ? new RosterError('unknown-team', 'name the school with ?school=ID', 400)
          : new RosterError('unknown-team', `unknown school "${schoolId.slice(0, 63)}"`, 404);
      const templateName = queryString(req.query.template) ?? defaultTemplateName(sessionId);
      const template = templateFor(templateName, { dir: templatesDir });
      // Decided before anything is read: a refused request learns nothing about the team, not even its name.
      const refusal = refuse(p, school.id, teamId, isSensitiveTemplate(template), sensitiveRoles);
      if (refusal) {
        // Audited before the answer: every refusal leaves a record (who, what, why).
        await refused(refusal);
        return forbidden(req, res, refusal);
      }
      const roster = await generateRoster(opts.store, {
        schoolId: school.id,
        teamId,
        sessionId,
        template: template.name,
        dir: templatesDir,
        eventTemplates: (id) => opts.config.schools.find((s) => s.id === id)?.eventTemplates,
        sensitiveRosters: (id) => opts.config.schools.some((s) => s.id === id && s.rosters.sensitive),
        mayShowMedical: seesSensitive(p, school.id, teamId, sensitiveRoles),
        now: opts.now?.() ?? new Date(),
        pastDays: pastDaysOf(school),
      });
      // Audited before a byte is sent: no record, no roster.
      await auth.auditView(req, res, {
        action: 'roster',
        schoolId: school.id,
        teamId,
        sessionId: roster.data.session?.id ?? null,
        template: template.name,
      });
      // A PDF is no HTML page: the app's default CSP (default-src 'none') only stops browsers' PDF viewers.
      res.removeHeader('Content-Security-Policy');
      res.set({
        'Content-Type': 'application/pdf',
        'Content-Disposition': disposition(roster.fileName),
        'X-Content-Type-Options': 'nosniff',
        'Content-Length': String(roster.pdf.length),
      });
      res.status(200).end(roster.pdf);
    } catch (err) {
      if (err instanceof RosterError) {
        try {
          await refused(err.message);
        } catch (auditErr) {
          return next(auditErr);
        }
        sendRefusal(req, res, err.status, err.message);
        return;
      }
      opts.onError?.(err, req);
      next(err);
    }
  });
}

/** GET /rosters/templates: the available templates (JSON), with the errors of those that did not load. */
function templatesRoute(router: express.Router, auth: StaffAuth, opts: RostersRouterOptions): void {
  const templatesDir = opts.templatesDir === undefined ? undefined : opts.templatesDir;
  router.get('/rosters/templates', noStore, auth.requireStaff, (req, res, next) => {
    try {
      const { templates, errors } = loadAllTemplates({ dir: templatesDir });
      sendJson(
        res,
        JSON.stringify({
          templates: templates.map((t) => ({
            name: t.name,
            title: t.title,
            description: t.description ?? null,
            session: t.session,
          })),
          errors,
        }),
      );
    } catch (err) {
      opts.onError?.(err, req);
      next(err);
    }
  });
}

const NOT_STAFF = 'you are not staff of this school';

/** Whether the principal may see this team's medical and guardian data (the school's allowed roles). */
export function seesSensitive(
  p: Principal,
  schoolId: string,
  teamId: number,
  roles: readonly SensitiveRole[],
): boolean {
  if (p.kind === 'admin-token') return roles.includes('admin') || roles.includes('staff');
  const m = p.memberships.find((x) => x.school.id === schoolId);
  return m !== undefined && canPrintSensitive(m.access, teamId, roles);
}

function refuse(
  p: Principal,
  schoolId: string,
  teamId: number,
  sensitive: boolean,
  roles: readonly SensitiveRole[],
): string | null {
  if (p.kind === 'admin-token')
    return !sensitive || seesSensitive(p, schoolId, teamId, roles)
      ? null
      : 'the school does not allow this template for administrators';
  const m = p.memberships.find((x) => x.school.id === schoolId);
  if (!m) return NOT_STAFF;
  if (!canSeeTeam(m.access, teamId)) return 'not one of your teams: ask the sports office if it should be';
  if (sensitive && !seesSensitive(p, schoolId, teamId, roles))
    return 'medical and guardian data of this team is only for the roles the school allows (by default administrators and the team’s assigned staff)';
  return null;
}
