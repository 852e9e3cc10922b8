// Everything staff reach on the web, wired once: who is asking (identify), sign-in (OIDC or, in the demo, the
// in-process demo identity provider), "My teams", the admins' pages and the rosters. Also prunes the audit log
// and ended sessions once a day.
import express, { type Router } from 'express';
import type { PushTargetConfig } from '../config/push-targets.ts';
import type { FeedTokens } from '../feeds/tokens.ts';
import type { DemoIdp, DemoIdpOptions } from '../identity/demo-idp.ts';
import type { DemoPerson } from '../identity/demo-people.ts';
import { StaffDirectory } from '../identity/directory.ts';
import { OidcRelyingParty, type OidcSettings } from '../identity/oidc.ts';
import type { SensitiveRole } from '../identity/roles.ts';
import { StaffSessions } from '../identity/staff-sessions.ts';
import { FailureThrottle } from '../identity/throttle.ts';
import type { Logger } from '../log.ts';
import type { SchoolId, Store } from '../store/types.ts';
import { type AdminRouterOptions, type AdminSchool, createAdminRouter } from './admin.ts';
import { createAdminStaffRouter } from './admin-staff.ts';
import { staffPageText } from './layouts.ts';
import { createRostersRouter, type RosterSchool } from './rosters.ts';
import { createStaffAuth, type StaffAuth } from './staff-auth.ts';
import { createStaffPageRouter } from './staff-page.ts';
import { createSessionPageRouter } from './staff-session-page.ts';

export interface StaffWebSettings {
  /** null: no identity provider (only ADMIN_TOKEN gets in), unless `demo` is set. */
  oidc: OidcSettings | null;
  /**
   * Demo mode: an in-process identity provider offering these people. The caller hands in the provider
   * (identity/demo-idp.ts's createDemoIdp, imported only in demo mode), so no other process loads it.
   */
  demo: { people: () => Promise<DemoPerson[]>; createIdp: (opts: DemoIdpOptions) => DemoIdp } | null;
  adminToken: string | null;
  sessionIdleHours: number;
  sessionMaxHours: number;
  sensitiveRoles: readonly SensitiveRole[];
  auditRetentionDays: number;
  helpContact?: string | null;
}

export interface StaffWebOptions extends StaffWebSettings {
  store: Pick<Store, 'records' | 'runs' | 'feeds' | 'links' | 'push' | 'access' | 'readOnly'>;
  tokens: FeedTokens;
  publicUrl: string;
  /** With their push targets: a feed's rotation also replaces its live Google calendar. */
  schools: readonly { id: SchoolId; name: string; timeZone: string; targets?: readonly PushTargetConfig[] }[];
  /** What the admin dashboard and rosters read of the configuration (schools, publicUrl). */
  config: Omit<AdminRouterOptions['config'], 'schools'> & {
    schools: readonly (AdminSchool & RosterSchool)[];
  };
  log: Logger;
  /** Lines for the operator's terminal (serve): the identity provider unreachable, then answering again. */
  say?: (line: string) => void;
  templatesDir?: string | null;
  throttle?: FailureThrottle;
  /** A rotation from /admin replaced live Google calendars of these targets: push them now (serve). */
  onLiveRotated?: (schoolId: SchoolId, targetIds: string[]) => void;
  /** The admins' calendar search, when the caller keeps it ready after pulls (serve). */
  search?: AdminRouterOptions['search'];
  /** The clock /staff lists upcoming sessions by (default the real one). */
  now?: () => Date;
}

export interface StaffWeb {
  router: Router;
  auth: StaffAuth;
  oidc: OidcRelyingParty | null;
  /** Starts identity-provider discovery (call once the web server listens: the demo provider is on it). */
  start(): void;
  stop(): void;
  /** Deletes audit records past retention and sessions that ended over a day ago. */
  prune(): Promise<{ audit: number; sessions: number }>;
}

export function createStaffWeb(opts: StaffWebOptions): StaffWeb {
  const base = opts.publicUrl.replace(/\/+$/, '');
  const redirectUri = `${base}/auth/callback`;
  const router = express.Router();
  let oidcSettings = opts.oidc;
  if (opts.demo) {
    const demo = opts.demo.createIdp({
      issuer: `${base}/demo-idp`,
      redirectUri,
      people: opts.demo.people,
      renderPage: staffPageText,
    });
    router.use('/demo-idp', demo.router);
    oidcSettings = {
      issuer: demo.issuer,
      clientId: demo.clientId,
      clientSecret: demo.clientSecret,
      scopes: [],
      allowedDomains: [],
    };
  }
  const oidc = oidcSettings
    ? new OidcRelyingParty(oidcSettings, {
        redirectUri,
        log: opts.log,
        ...(opts.say ? { notify: opts.say } : {}),
      })
    : null;
  const sessions = new StaffSessions(opts.store, {
    idleMs: opts.sessionIdleHours * 3_600_000,
    maxMs: opts.sessionMaxHours * 3_600_000,
    secure: base.startsWith('https://'),
  });
  const directory = new StaffDirectory(opts.store, opts.schools);
  const auth = createStaffAuth({
    store: opts.store,
    sessions,
    directory,
    oidc,
    adminToken: opts.adminToken,
    publicUrl: base,
    throttle: opts.throttle ?? new FailureThrottle(),
    helpContact: opts.helpContact ?? null,
    onError: (err) => opts.log.error({ err }, 'sign-in failed'),
  });
  router.use(auth.identify, auth.router);
  router.use(
    createStaffPageRouter({
      store: opts.store,
      auth,
      tokens: opts.tokens,
      schools: opts.schools,
      sensitiveRoles: opts.sensitiveRoles,
      templates: (id) => opts.config.schools.find((s) => s.id === id)?.eventTemplates,
      ...(opts.now ? { now: opts.now } : {}),
    }),
    createSessionPageRouter({
      store: opts.store,
      auth,
      schools: opts.config.schools,
      sensitiveRoles: opts.sensitiveRoles,
      ...(opts.now ? { now: opts.now } : {}),
    }),
    createAdminRouter({
      store: opts.store,
      config: opts.config,
      auth,
      tokens: opts.tokens,
      ...(opts.search ? { search: opts.search } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    }),
    createAdminStaffRouter({
      store: opts.store,
      auth,
      tokens: opts.tokens,
      schools: opts.schools,
      publicUrl: base,
      logger: opts.log,
      ...(opts.templatesDir !== undefined ? { templatesDir: opts.templatesDir } : {}),
      ...(opts.onLiveRotated ? { onLiveRotated: opts.onLiveRotated } : {}),
      ...(opts.now ? { now: opts.now } : {}),
    }),
    createRostersRouter({
      store: opts.store,
      config: opts.config,
      auth,
      sensitiveRoles: opts.sensitiveRoles,
      ...(opts.templatesDir !== undefined ? { templatesDir: opts.templatesDir } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      onError: (err) => opts.log.error({ err }, 'roster failed'),
    }),
  );

  let timer: NodeJS.Timeout | null = null;
  const prune = async () => {
    const at = Date.now();
    const audit = await opts.store.access.pruneAudit(
      new Date(at - opts.auditRetentionDays * 86_400_000).toISOString(),
    );
    const ended = await opts.store.access.pruneStaffSessions(new Date(at - 86_400_000).toISOString());
    return { audit, sessions: ended };
  };
  return {
    router,
    auth,
    oidc,
    start() {
      oidc?.start();
      const run = () => prune().catch((err) => opts.log.error({ err }, 'pruning the audit log failed'));
      void run();
      timer = setInterval(run, 86_400_000);
      timer.unref();
    },
    stop() {
      oidc?.stop();
      if (timer) clearInterval(timer);
    },
    prune,
  };
}
