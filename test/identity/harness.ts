// Staff sign-in end to end: sandbox → pull → store → rostercal's web app (createStaffWeb) on one port, and a
// real OpenID provider (oidc-provider, in-process) on another, both on loopback http. `signIn` walks the
// authorization-code + PKCE flow over HTTP with a cookie jar per browser, exactly as a browser would.
import express from 'express';
import pino from 'pino';
import type { StaffUser, Team } from '../../src/domain/types.ts';
import type { FamilyAbsences } from '../../src/families/absences.ts';
import { createDemoIdp } from '../../src/identity/demo-idp.ts';
import type { DemoPerson } from '../../src/identity/demo-people.ts';
import { type SensitiveRole, staffAccess } from '../../src/identity/roles.ts';
import type { Logger } from '../../src/log.ts';
import type { AuditRecord, Store } from '../../src/store/types.ts';
import { createApp } from '../../src/web/app.ts';
import { staffPageText } from '../../src/web/layouts.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';
import { createStaffWeb, type StaffWeb } from '../../src/web/staff-web.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { freePort } from '../support/ports.ts';
export interface TestIdp {
  url: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** A member of staff as the test provider's picker offers them: signs in as staff by their upstream e-mail. */
export function staffPerson(u: {
  id: number;
  email: string | null;
  firstName: string;
  lastName: string;
}): DemoPerson {
  return { id: String(u.id), email: u.email!, name: `${u.firstName} ${u.lastName}`, role: 'staff', note: '' };
}

/** A real OpenID provider offering `people` (the demo provider's picker stands in for a password page). */
export async function startTestIdp(people: DemoPerson[], redirectUri: string): Promise<TestIdp> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}/idp`;
  const idp = createDemoIdp({ issuer, redirectUri, people: async () => people, renderPage: staffPageText });
  const app = express();
  app.use('/idp', idp.router);
  const server = await startServer(app, { port, host: '127.0.0.1' });
  return {
    url: server.url,
    issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    close: () => server.close(500),
  };
}

/**
 * The harness's school pulled in full with its medical and guardian data (sensitive rosters on), and what the staff
 * tests pick from: its visible teams and the members of staff who can sign in as staff (an e-mail, not frozen, not an
 * administrator or manager).
 */
export async function pullWithMedicalData(h: Harness) {
  const school = { ...h.school, rosters: { ...h.school.rosters, sensitive: true } };
  const summary = await h.pull('full', school);
  const teams: Team[] = (await h.store.records.list(h.school.id, 'teams')).filter((t) => !t.hidden);
  const staff = (await h.store.records.list(h.school.id, 'staff')).filter(
    (s) => s.email && !s.frozen && !s.isAdmin && !s.isManager,
  ) as unknown as StaffUser[];
  return { school, summary, teams, staff };
}

/** What a test may set on the staff site besides its port and provider. */
export type StaffSiteOptions = Omit<Parameters<typeof startStaffSite>[1], 'port' | 'idp'>;

/** A test provider offering these members of staff, and the staff site signing in through it. */
export async function staffSiteFor(
  h: Parameters<typeof startStaffSite>[0],
  people: readonly Pick<StaffUser, 'id' | 'email' | 'firstName' | 'lastName'>[],
  opts: StaffSiteOptions = {},
): Promise<{ idp: TestIdp; site: StaffSite }> {
  const port = await freePort();
  const idp = await startTestIdp(people.map(staffPerson), `http://127.0.0.1:${port}/auth/callback`);
  const site = await startStaffSite(h, { ...opts, port, idp });
  return { idp, site };
}

/** The school as `pullWithMedicalData` read it. */
export type PulledSchool = Awaited<ReturnType<typeof pullWithMedicalData>>;

/** Who signs in: the coach, anyone else the provider must offer, and whatever the test picked alongside them. */
export interface Cast {
  coach: StaffUser;
  others?: StaffUser[];
}

/** A signed-in coach's world: the harness, the pulled school, the coach and their own teams, provider and site. */
export interface CoachSite extends PulledSchool {
  h: Harness;
  coach: StaffUser;
  /** The teams the coach is assigned to (their "My teams"). */
  coachTeams: Team[];
  idp: TestIdp;
  site: StaffSite;
  /** Closes the site, the provider and the harness, in that order. */
  close(): Promise<void>;
}

/** The first member of staff (in the store's order) assigned to a team of their own. */
export const firstCoach = ({ teams, staff }: PulledSchool): Cast => {
  const coach = staff.find((s) => staffAccess(s, teams).assignedTeamIds.size > 0);
  if (!coach) throw new Error('no member of staff with a team of their own in the generated school');
  return { coach };
};

/**
 * The arrange of every test of a coach on the staff site: a harness on the sandbox (`seed`, `scale`), its school
 * pulled with medical and guardian data, the coach (`pick`, by default `firstCoach`) and the staff site with a
 * provider offering them and `others`. What the test picked comes back beside the rest; one close() ends it all.
 */
export async function coachSite<C extends Cast = Cast>(
  opts: Parameters<typeof startHarness>[0] & {
    /** Changes to the sandbox's school before the pull (hostile strings, …). */
    beforePull?: (h: Harness) => void;
    pick?: (pulled: PulledSchool, h: Harness) => C | Promise<C>;
    site?: (pulled: PulledSchool, h: Harness) => StaffSiteOptions;
  } = {},
): Promise<CoachSite & C> {
  const { beforePull, pick, site: siteOptions, ...harness } = opts;
  const h = await startHarness(harness);
  try {
    beforePull?.(h);
    const pulled = await pullWithMedicalData(h);
    const cast = (await (pick ?? firstCoach)(pulled, h)) as C;
    const access = staffAccess(cast.coach, pulled.teams);
    const coachTeams = pulled.teams.filter((t) => access.assignedTeamIds.has(t.id));
    const { idp, site } = await staffSiteFor(
      h,
      [cast.coach, ...(cast.others ?? [])],
      siteOptions?.(pulled, h),
    );
    return {
      ...pulled,
      ...cast,
      h,
      coachTeams,
      idp,
      site,
      async close() {
        await site.close();
        await idp.close();
        await h.close();
      },
    };
  } catch (e) {
    await h.close();
    throw e;
  }
}

export interface StaffSite {
  url: string;
  staff: StaffWeb;
  server: RunningServer;
  close(): Promise<void>;
}

export async function startStaffSite(
  h: Pick<Harness, 'feeds' | 'metrics' | 'tokens' | 'school' | 'sandbox'> & { store: Store },
  opts: {
    port: number;
    idp: TestIdp | { issuer: string; clientId: string; clientSecret: string } | null;
    adminToken?: string | null;
    sensitiveRoles?: SensitiveRole[];
    log?: Logger;
    sessionIdleHours?: number;
    /** Where people reach the site (default http://127.0.0.1:PORT); it still listens on 127.0.0.1. */
    publicUrl?: string;
    /** The clock /staff lists upcoming sessions by (default the real one). */
    now?: () => Date;
    /** Families' "can't make it" on the calendar pages (the school's `families.reportAbsences` on). */
    absences?: FamilyAbsences;
    /** Demo mode: the in-process provider on the site itself, offering these people (`idp` is then null). */
    demoPeople?: DemoPerson[];
    helpContact?: string;
    auditRetentionDays?: number;
  },
): Promise<StaffSite> {
  const publicUrl = opts.publicUrl ?? `http://127.0.0.1:${opts.port}`;
  const schools = [{ id: h.school.id, name: h.school.name, timeZone: h.school.timeZone }];
  const log = opts.log ?? pino({ level: 'silent' });
  const staff = createStaffWeb({
    store: h.store,
    tokens: h.tokens,
    log,
    publicUrl,
    schools,
    // The school keeps medical and guardian data, so its medical sheet can be printed by those allowed to.
    config: { schools: [{ ...h.school, rosters: { ...h.school.rosters, sensitive: true } }], publicUrl },
    adminToken: opts.adminToken ?? null,
    oidc: opts.idp
      ? {
          issuer: opts.idp.issuer,
          clientId: opts.idp.clientId,
          clientSecret: opts.idp.clientSecret,
          scopes: [],
          allowedDomains: [],
        }
      : null,
    demo: opts.demoPeople ? { people: async () => opts.demoPeople!, createIdp: createDemoIdp } : null,
    sessionIdleHours: opts.sessionIdleHours ?? 8,
    sessionMaxHours: 24,
    sensitiveRoles: opts.sensitiveRoles ?? ['admin', 'assigned'],
    auditRetentionDays: opts.auditRetentionDays ?? 400,
    ...(opts.helpContact ? { helpContact: opts.helpContact } : {}),
    // The sandbox's clock unless told: My teams lists the sessions of the school the tests built.
    now: opts.now ?? (() => new Date(h.sandbox.now())),
  });
  const app = createApp({
    store: h.store,
    feeds: h.feeds,
    metrics: h.metrics,
    publicUrl,
    logger: log,
    now: () => new Date(h.sandbox.now()),
    feedRateLimit: false,
    ...(opts.absences ? { absences: opts.absences } : {}),
    routers: { '/': staff.router },
  });
  const server = await startServer(app, { port: opts.port, host: '127.0.0.1' });
  staff.start();
  return {
    url: server.url,
    staff,
    server,
    async close() {
      staff.stop();
      await server.close(500);
    },
  };
}

/** A browser's cookies, per host:port (enough for loopback tests: no domains, paths or expiry). */
export class CookieJar {
  readonly #jar = new Map<string, Map<string, string>>();
  header(url: string): string {
    const m = this.#jar.get(new URL(url).host);
    return m ? [...m].map(([k, v]) => `${k}=${v}`).join('; ') : '';
  }
  store(url: string, res: Response): void {
    const host = new URL(url).host;
    const m = this.#jar.get(host) ?? new Map<string, string>();
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') m.delete(name);
      else m.set(name, value);
    }
    this.#jar.set(host, m);
  }
  get(url: string, name: string): string | undefined {
    return this.#jar.get(new URL(url).host)?.get(name);
  }
  set(url: string, name: string, value: string): void {
    const host = new URL(url).host;
    const m = this.#jar.get(host) ?? new Map<string, string>();
    m.set(name, value);
    this.#jar.set(host, m);
  }
}

/** fetch with the jar's cookies, following redirects by hand (so cookies of every hop are kept). */
export async function browse(
  jar: CookieJar,
  url: string,
  init: { method?: string; body?: URLSearchParams; headers?: Record<string, string> } = {},
): Promise<{ res: Response; url: string; body: string }> {
  let current = url;
  let method = init.method ?? 'GET';
  let body: URLSearchParams | undefined = init.body;
  for (let hop = 0; hop < 20; hop++) {
    const res = await fetch(current, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(current), accept: 'text/html', ...(init.headers ?? {}) },
      ...(body ? { body } : {}),
    });
    jar.store(current, res);
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      current = new URL(location, current).href;
      method = 'GET';
      body = undefined;
      await res.arrayBuffer();
      continue;
    }
    return { res, url: current, body: await res.text() };
  }
  throw new Error(`too many redirects from ${url}`);
}

/** Walks the whole sign-in: rostercal → provider's picker → pick `personId` → callback → where rostercal sends. */
export async function signIn(
  jar: CookieJar,
  siteUrl: string,
  personId: string,
  returnTo = '/staff',
): Promise<{ res: Response; url: string; body: string }> {
  const picker = await browse(jar, `${siteUrl}/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
  if (picker.res.status !== 200) throw new Error(`picker: ${picker.res.status} ${picker.body.slice(0, 300)}`);
  const action = /action="([^"]*\/interaction\/[^"]+\/login)"/.exec(picker.body)?.[1];
  if (!action) throw new Error(`no picker form at ${picker.url}: ${picker.body.slice(0, 300)}`);
  return browse(jar, new URL(action, picker.url).href, {
    method: 'POST',
    body: new URLSearchParams({ account: personId }),
  });
}

/** An audit record as a test appends it: now, of the school 'hill', about nothing but what `r` says. */
export function auditRecord(
  r: Partial<Omit<AuditRecord, 'id'>> & Pick<AuditRecord, 'action' | 'actor'>,
): Omit<AuditRecord, 'id'> {
  return {
    at: new Date().toISOString(),
    schoolId: 'hill',
    teamId: null,
    sessionId: null,
    template: null,
    clientAddress: null,
    staffSession: null,
    detail: null,
    ...r,
  };
}
