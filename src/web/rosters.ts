// Staff-only roster routes:
//   GET /rosters/teams/:teamId.pdf?template=NAME&session=ID&school=ID  the PDF (inline)
//   GET /rosters/templates                                           the available templates (JSON)
// plus the staff login form (/admin/login, /admin/logout) unless a shared AdminAuth is passed in.
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Config } from '../config.ts';
import { generateRoster, loadAllTemplates, RosterError } from '../rosters/index.ts';
import type { Store } from '../store/types.ts';
import { type AdminAuth, createAdminAuth } from './admin-auth.ts';

export interface RostersRouterOptions {
  store: Store;
  /** The schools: with exactly one, `?school=` may be left out. */
  config: Pick<Config, 'schools'>;
  /** ADMIN_TOKEN; ignored when `auth` is given. */
  adminToken?: string | null;
  /** A shared staff-auth instance (the admin pages' one); its login routes are then mounted by its owner. */
  auth?: AdminAuth;
  /** The school's own roster templates (configuration: ROSTER_TEMPLATES_DIR). */
  templatesDir?: string | null;
  /** Called for unexpected failures (a logger's error method). */
  onError?: (err: unknown, req: Request) => void;
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
  const auth = opts.auth ?? createAdminAuth({ adminToken: opts.adminToken });
  const router = express.Router();
  if (!opts.auth) router.use(auth.router);
  const templatesDir = opts.templatesDir === undefined ? undefined : opts.templatesDir;
  const defaultSchool = opts.config.schools.length === 1 ? opts.config.schools[0]!.id : null;

  const noStore = (_req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    next();
  };

  router.get('/rosters/teams/:teamId.pdf', noStore, auth.requireStaff, async (req, res, next) => {
    try {
      const teamId = idParam('team', queryString(req.params.teamId) ?? '');
      const sessionId = idParam('session', queryString(req.query.session));
      const roster = await generateRoster(opts.store, {
        schoolId: queryString(req.query.school) ?? defaultSchool,
        teamId: teamId!,
        sessionId,
        template: queryString(req.query.template) ?? null,
        dir: templatesDir,
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
        res.status(err.status).type('text').send(`${err.message}\n`);
        return;
      }
      opts.onError?.(err, req);
      next(err);
    }
  });

  router.get('/rosters/templates', noStore, auth.requireStaff, (req, res, next) => {
    try {
      const { templates, errors } = loadAllTemplates({ dir: templatesDir });
      res.json({
        templates: templates.map((t) => ({
          name: t.name,
          title: t.title,
          description: t.description ?? null,
          session: t.session,
        })),
        errors,
      });
    } catch (err) {
      opts.onError?.(err, req);
      next(err);
    }
  });

  return router;
}
