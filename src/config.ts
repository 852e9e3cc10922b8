// rostercal's configuration: a JSON file (ROSTERCAL_CONFIG) validated with zod, or environment variables that
// describe one school, or — with neither — the demo school served by the in-process sandbox.
// This is the only module that reads the environment (loadConfig): everything else gets the typed Config.
// A bad configuration stops start-up with one message naming each offending field; secrets never print.
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import cron from 'node-cron';
import { z } from 'zod';
import { EventTemplateError, type EventTemplates, loadEventTemplates } from './calendar/templates.ts';
import {
  feedRateLimitFromEnv,
  feedRateLimitSchema,
  trustProxyFromEnv,
  trustProxySchema,
} from './config/edge-settings.ts';
import { type PushTargetConfig, resolveTargets, targetsSchema } from './config/push-targets.ts';
import { sandboxNow } from './config/sandbox-clock.ts';
import {
  type AuthSettings,
  authSchema,
  oidcEnvName,
  resolveAuth,
  withOidcFromEnv,
} from './identity/settings.ts';
import { LOG_LEVELS, type LogLevel, rememberSecrets, scrubSecrets } from './log-text.ts';
import { editDistance } from './util/edit-distance.ts';
import { isKnownTimeZone } from './util/time-zone.ts';
import { didYouMean, isAbbreviation } from './util/time-zone-suggest.ts';
import {
  apiBaseUrl,
  ConfigError,
  configError,
  formatPath,
  httpUrl,
  issueProblem,
  type Problem,
  resolveSecret,
} from './validation.ts';

export { ConfigError, formatPath };

const timeZone = z.string().superRefine((tz, ctx) => {
  if (!isKnownTimeZone(tz))
    ctx.addIssue({ code: 'custom', message: `"${tz}" is not a known time zone.${didYouMean(tz)}` });
  else if (isAbbreviation(tz))
    ctx.addIssue({
      code: 'custom',
      message: `"${tz}" is a fixed offset that ignores daylight saving, not a place's time zone.${didYouMean(tz)}`,
    });
});

const cronExpression = z.string().superRefine((expr, ctx) => {
  if (!cron.validate(expr))
    ctx.addIssue({ code: 'custom', message: `"${expr}" is not a valid cron expression` });
});

const positiveInt = z.number().int().positive();

const portNumber = z
  .number({
    error: (issue) =>
      typeof issue.input === 'string' ? `"${issue.input}" is not a port number (0–65535)` : undefined,
  })
  .int()
  .min(0)
  .max(65535);

export const upstreamSchema = z.strictObject({
  url: apiBaseUrl,
  /** The API token itself, or `env:NAME` to read it from the environment variable NAME. */
  token: z.string().min(1, 'must not be empty'),
  rateLimit: z
    .strictObject({
      requestsPerSecond: z.number().positive(),
      concurrency: positiveInt.default(4),
    })
    .optional(),
  backoff: z
    .strictObject({
      baseMs: z.number().nonnegative().optional(),
      capMs: z.number().positive().optional(),
      maxRetries: z.number().int().nonnegative().optional(),
      /** A 429 asking to wait longer than this fails at once, saying so (default 120 s). */
      maxRetryAfterMs: z.number().nonnegative().optional(),
    })
    .optional(),
  timeoutMs: positiveInt.optional(),
});

export const schoolSchema = z.strictObject({
  id: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/,
      'must be 1-63 letters, digits, "-" or "_" (it appears in URLs)',
    ),
  name: z.string().min(1, 'must not be empty'),
  /** Served by the in-process sandbox (`serve`/`sync` start it); upstream.url is then filled in at start. */
  demo: z.boolean().default(false),
  upstream: upstreamSchema,
  timeZone,
  syncWindow: z
    .strictObject({
      daysBack: z.number().int().nonnegative().default(60),
      daysAhead: z.number().int().positive().default(365),
    })
    .prefault({}),
  schedules: z
    .strictObject({
      // Every 10 s: an edit to a session waits at most 10 s for the next pull, so it is in the feeds within ~15 s
      // (every 30 s left the slowest at 26 s). Each fire reads only the resources whose beat has come round
      // (pull.beatSeconds): sessions at every fire, absences every minute, teams every 2 minutes, so an idle school
      // costs its upstream 6 + 1 + 1 = 8 requests a minute, what the 30-s fires reading all four listings cost.
      incremental: cronExpression.default('*/10 * * * * *'),
      full: cronExpression.default('0 */6 * * *'),
      push: cronExpression.optional(),
    })
    .prefault({}),
  deletionGuard: z
    .strictObject({
      maxShrinkFraction: z.number().min(0).max(1).default(0.3),
    })
    .prefault({}),
  pull: z
    .strictObject({
      /** How stale reference data (students, staff, activities, …) may get before an incremental run re-reads it. */
      referenceRefreshMinutes: z.number().positive().default(60),
      /**
       * The least seconds between two scheduled incremental reads of a resource (0: at every incremental fire),
       * timed from fire to fire: each is read as often as it changes. Absences within a minute, so what a family
       * reported reaches the coach within one. Full pulls and `rostercal sync` read everything.
       */
      beatSeconds: z
        .strictObject({
          sessions: z.number().nonnegative().default(0),
          absences: z.number().nonnegative().default(60),
          teams: z.number().nonnegative().default(120),
        })
        .prefault({}),
      /** `updatedAfter` is the previous run's start minus this, for clock skew between us and upstream. */
      overlapSeconds: z.number().nonnegative().default(120),
      /** Single-team reads in flight at once (with sensitive rosters: every listed team is read singly). */
      teamConcurrency: positiveInt.default(4),
    })
    .prefault({}),
  rosters: z
    .strictObject({
      /**
       * Medical conditions and guardian contacts (only single-team reads carry them, one request per team): read
       * and kept only when the school prints them (the medical-and-guardian-contacts roster). Off: none are
       * fetched and what an earlier pull stored is deleted.
       */
      sensitive: z.boolean().default(false),
    })
    .prefault({}),
  /**
   * What families may do from their calendar pages. `reportAbsences`: "Can't make it?" on a child's page and on
   * family pages writes a pre-explained absence upstream (src/families/absences.ts); off unless the school turns
   * it on. The limits hold per child (standing reports made in the last 24 hours) and per client address (acts in
   * the last hour), both counted in the store, so across replicas.
   */
  families: z
    .strictObject({
      reportAbsences: z.boolean().default(false),
      reportsPerChildPerDay: positiveInt.default(3),
      actsPerAddressPerHour: positiveInt.default(20),
    })
    .prefault({}),
  /** Push targets: their shape is src/config/push-targets.ts. */
  targets: targetsSchema.default([]),
});

export const configSchema = z
  .strictObject({
    schools: z.array(schoolSchema).min(1, 'needs at least one school'),
    publicUrl: httpUrl.optional(),
    port: portNumber.default(8080),
    dataDir: z.string().min(1).default('./data'),
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
    /** Staff sign-in, sensitive sheets, sessions and the audit log: src/identity/settings.ts. */
    auth: authSchema,
    /** Reverse proxies trusted to name the client (TRUST_PROXY): src/config/edge-settings.ts. */
    trustProxy: trustProxySchema.optional(),
    /**
     * /metrics on a listen address of its own (METRICS_PORT, METRICS_HOST), for Prometheus on the inside; the
     * families' port serves it only with METRICS_TOKEN (src/web/metrics-access.ts).
     */
    metrics: z
      .strictObject({
        port: portNumber,
        /** Default 0.0.0.0; 127.0.0.1 keeps it to this host. */
        host: z.string().min(1, 'must not be empty').optional(),
      })
      .optional(),
    /** A per-client limit on feed requests (FEED_RATE_LIMIT); unset: only failed lookups are throttled. */
    feedRateLimit: feedRateLimitSchema.optional(),
    /**
     * The schools' own event wording: a directory holding `default.json` (every school) and/or `<schoolId>.json`
     * (one school), each any subset of templates/events/default.json's keys. EVENT_TEMPLATES_DIR wins.
     */
    eventTemplatesDir: z.string().min(1, 'must not be empty').optional(),
  })
  .superRefine((cfg, ctx) => {
    const seen = new Set<string>();
    cfg.schools.forEach((s, i) => {
      if (seen.has(s.id))
        ctx.addIssue({ code: 'custom', path: ['schools', i, 'id'], message: `"${s.id}" is used twice` });
      seen.add(s.id);
    });
  });

export type ConfigInput = z.input<typeof configSchema>;
type SchemaOutput = z.output<typeof configSchema>;
/** A school as configured, its push targets typed and its secrets resolved. */
export type SchoolConfig = Omit<SchemaOutput['schools'][number], 'targets'> & {
  targets: PushTargetConfig[];
  /**
   * The school's wording (built-in, then eventTemplatesDir's files), loaded by loadConfig; feeds, pushes, landing
   * pages and rosters all use it. Absent: the built-in wording.
   */
  eventTemplates?: EventTemplates;
  /**
   * Where this school's upstream URL and token are set (`UPSTREAM_TOKEN`, `schools[0].upstream.token`, the
   * variable an `env:NAME` token reads), for messages that tell an operator what to check.
   */
  upstreamSettings?: { url: string; token: string };
};
export type ParsedConfig = Omit<SchemaOutput, 'schools' | 'auth'> & {
  schools: SchoolConfig[];
  auth: AuthSettings;
};
export type UpstreamConfig = SchoolConfig['upstream'];

/** Settings only the environment gives (no file field): read here so no other module reads the environment. */
export interface RuntimeSettings {
  /** LOG_LEVEL; each command has its own default when unset. */
  logLevel?: LogLevel | undefined;
  /** ADMIN_TOKEN: staff access to rosters and the dashboard. */
  adminToken?: string | null;
  /** METRICS_TOKEN: /metrics answers a request bearing it (src/web/metrics-access.ts). */
  metricsToken?: string | null;
  /** FEED_SECRET: the key feed tokens derive from (else a file in dataDir). */
  feedSecret?: string | null;
  /** ROSTER_TEMPLATES_DIR: the school's own roster templates. */
  rosterTemplatesDir?: string | null;
  /**
   * READY_MAX_PULL_AGE_MINUTES: /readyz turns 503 once a school's last successful pull is older than this
   * (default: three of its incremental intervals).
   */
  readyMaxPullAgeMinutes?: number | null;
  /** STOP_TIMEOUT_SECONDS: how long `serve` lets a stop take, running pull included, before exiting (default 20). */
  stopTimeoutSeconds?: number | null;
  /** SANDBOX_NOW: where serve's clock starts (tests and demos against the sandbox only; config/sandbox-clock.ts). */
  sandboxNow?: string | null;
}

export interface Config extends Omit<ParsedConfig, 'publicUrl'>, RuntimeSettings {
  /** Where people reach the web server; defaults to http://localhost:PORT. */
  publicUrl: string;
  /** publicUrl was configured (file or PUBLIC_URL), rather than derived from the port. */
  publicUrlGiven?: boolean;
  /** What is allowed but probably wrong (a missing PUBLIC_URL): the CLI prints these on stderr. */
  warnings?: string[];
  /** Where the configuration came from: for `describeConfig` and the admin pages. */
  source:
    | { kind: 'file'; path: string }
    | { kind: 'env' }
    /** `misspelt`: variables set that look like ROSTERCAL_CONFIG or UPSTREAM_URL ("ROSTERCAL_CONFG → ROSTERCAL_CONFIG"). */
    | { kind: 'demo'; misspelt?: string[] };
}

/** The demo school: the sandbox's generated school, started in-process by `serve` and `sync`. */
export const DEMO_SCHOOL_ID = 'demo';
export const DEMO_SANDBOX = {
  seed: 42,
  scale: 'school',
  token: 'demo-sandbox-token',
  timeZone: 'Australia/Sydney',
} as const;

/**
 * Validates raw configuration, resolves `env:NAME` secrets from `env` (none by default) and types each school's
 * push targets. The paths in errors are translated by `rename` (env mode names variables).
 */
export function parseConfig(
  raw: unknown,
  opts: { rename?: (path: string) => string; where?: string; env?: NodeJS.ProcessEnv } = {},
): ParsedConfig {
  const rename = (problems: Problem[]) =>
    problems.map((p) => ({ ...p, path: opts.rename ? opts.rename(p.path) : p.path }));
  const result = configSchema.safeParse(raw);
  if (!result.success) throw configError(rename(result.error.issues.map((i) => issueProblem(i))), opts.where);
  const env = opts.env ?? {};
  const problems: Problem[] = [];
  const schools = result.data.schools.map((s, i) =>
    resolveSchool(s, ['schools', i], env, problems, opts.rename),
  );
  const auth = resolveAuth(result.data.auth, env, problems);
  if (problems.length) throw configError(rename(problems), opts.where);
  return { ...result.data, schools, auth };
}

/** `env:NAME` secrets resolved and push targets typed; what cannot be resolved is added to `problems`. */
function resolveSchool(
  s: SchemaOutput['schools'][number],
  at: PropertyKey[],
  env: NodeJS.ProcessEnv,
  problems: Problem[],
  rename: (path: string) => string = (p) => p,
): SchoolConfig {
  const tokenPath = formatPath([...at, 'upstream', 'token']);
  const token = resolveSecret(s.upstream.token, env, tokenPath, problems);
  const fromEnv = /^env:(.+)$/.exec(s.upstream.token)?.[1];
  return {
    ...s,
    upstream: { ...s.upstream, token },
    upstreamSettings: {
      url: rename(formatPath([...at, 'upstream', 'url'])),
      token: fromEnv ? `${fromEnv} (${rename(tokenPath)})` : rename(tokenPath),
    },
    targets: resolveTargets(s.targets, [...at, 'targets'], env, problems),
  };
}

/** One school on its own (tests, benches): defaults filled, `env:NAME` secrets resolved from `env`. */
export function parseSchool(raw: unknown, env: NodeJS.ProcessEnv = {}): SchoolConfig {
  const result = schoolSchema.safeParse(raw);
  if (!result.success) throw configError(result.error.issues.map((i) => issueProblem(i)));
  const problems: Problem[] = [];
  const school = resolveSchool(result.data, [], env, problems);
  if (problems.length) throw configError(problems);
  return school;
}

const ENV_NAMES: Record<string, string> = {
  'schools[0].id': 'SCHOOL_ID',
  'schools[0].name': 'SCHOOL_NAME',
  'schools[0].upstream.url': 'UPSTREAM_URL',
  'schools[0].upstream.token': 'UPSTREAM_TOKEN',
  'schools[0].timeZone': 'SCHOOL_TZ',
  port: 'PORT',
  dataDir: 'DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  publicUrl: 'PUBLIC_URL',
  trustProxy: 'TRUST_PROXY',
  feedRateLimit: 'FEED_RATE_LIMIT',
  'metrics.port': 'METRICS_PORT',
  'metrics.host': 'METRICS_HOST',
  eventTemplatesDir: 'EVENT_TEMPLATES_DIR',
};

function parsePort(value: string | undefined): number | string | undefined {
  if (value === undefined || value === '') return undefined;
  // Leave non-numbers as strings so the schema reports them under the variable's name.
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** Deployment settings from the environment win over the file: the same file serves several environments. */
function deploymentOverrides(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (env.DATABASE_URL) o.databaseUrl = env.DATABASE_URL;
  if (env.DATA_DIR) o.dataDir = env.DATA_DIR;
  const port = parsePort(env.PORT);
  if (port !== undefined) o.port = port;
  if (env.PUBLIC_URL) o.publicUrl = env.PUBLIC_URL;
  const trustProxy = trustProxyFromEnv(env.TRUST_PROXY);
  if (trustProxy !== undefined) o.trustProxy = trustProxy;
  const feedRateLimit = feedRateLimitFromEnv(env.FEED_RATE_LIMIT);
  if (feedRateLimit !== undefined) o.feedRateLimit = feedRateLimit;
  if (env.EVENT_TEMPLATES_DIR) o.eventTemplatesDir = env.EVENT_TEMPLATES_DIR;
  const metricsPort = parsePort(env.METRICS_PORT);
  if (metricsPort !== undefined || env.METRICS_HOST)
    o.metrics = { port: metricsPort, ...(env.METRICS_HOST ? { host: env.METRICS_HOST } : {}) };
  return o;
}

/** OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET over the raw `auth.oidc`; a partial set stops here. */
function oidcFromEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, where?: string): void {
  const problems = withOidcFromEnv(raw, env);
  if (problems?.length) throw configError(problems, where);
}

/** Shorter than this, an ADMIN_TOKEN could be guessed; it opens every roster. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

/** LOG_LEVEL, ADMIN_TOKEN, METRICS_TOKEN, FEED_SECRET, ROSTER_TEMPLATES_DIR. */
function runtimeSettings(env: NodeJS.ProcessEnv): RuntimeSettings {
  const level = env.LOG_LEVEL || undefined;
  if (level !== undefined && !(LOG_LEVELS as readonly string[]).includes(level))
    throw configError([{ path: 'LOG_LEVEL', message: `must be one of ${LOG_LEVELS.join(', ')}` }]);
  const adminToken = longToken(env, 'ADMIN_TOKEN', 'it opens every roster');
  const metricsToken = longToken(env, 'METRICS_TOKEN', 'it opens /metrics on the families’ port');
  return {
    logLevel: level as LogLevel | undefined,
    adminToken,
    metricsToken,
    feedSecret: env.FEED_SECRET || null,
    rosterTemplatesDir: env.ROSTER_TEMPLATES_DIR || null,
    readyMaxPullAgeMinutes: positiveNumber(env, 'READY_MAX_PULL_AGE_MINUTES'),
    stopTimeoutSeconds: positiveNumber(env, 'STOP_TIMEOUT_SECONDS'),
  };
}

/** A bearer secret from the environment, refused when short enough to guess. */
function longToken(env: NodeJS.ProcessEnv, name: string, why: string): string | null {
  const token = env[name]?.trim() || null;
  if (token !== null && token.length < ADMIN_TOKEN_MIN_LENGTH)
    throw configError([
      {
        path: name,
        message: `is ${token.length} characters long; ${why}, so it must have at least ${ADMIN_TOKEN_MIN_LENGTH} (make one with: openssl rand -base64 33)`,
      },
    ]);
  return token;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string): number | null {
  const text = env[name]?.trim();
  if (!text) return null;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0)
    throw configError([{ path: name, message: `must be a positive number, not ${JSON.stringify(text)}` }]);
  return n;
}

/** The variables of a school described by environment (with UPSTREAM_URL). */
const SCHOOL_ENV = ['UPSTREAM_TOKEN', 'SCHOOL_TZ', 'SCHOOL_ID', 'SCHOOL_NAME'] as const;

/**
 * Each school's wording, read now so that a bad template stops start-up (naming the file and key) rather than the
 * first feed render. A relative directory is taken from the working directory, like dataDir.
 */
function withEventTemplates(parsed: ParsedConfig, env: NodeJS.ProcessEnv, where?: string): ParsedConfig {
  const field = env.EVENT_TEMPLATES_DIR ? 'EVENT_TEMPLATES_DIR' : 'eventTemplatesDir';
  let dir: string | undefined;
  if (parsed.eventTemplatesDir !== undefined) {
    dir = path.resolve(parsed.eventTemplatesDir);
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {}
    if (!isDir)
      throw configError(
        [{ path: field, message: `${dir} is not a directory (the school's event wording)` }],
        where,
      );
  }
  try {
    const schools = parsed.schools.map((s) => ({
      ...s,
      eventTemplates: loadEventTemplates({ dir: dir ?? null, schoolId: s.id }),
    }));
    return { ...parsed, schools, ...(dir ? { eventTemplatesDir: dir } : {}) };
  } catch (err) {
    if (err instanceof EventTemplateError) throw configError([{ path: field, message: err.message }], where);
    throw err;
  }
}

/**
 * DATA_DIR is created on first use; a path that is (or lies under) a file would only fail later with a bare
 * ENOTDIR/EEXIST from whichever command touched it first, so it is named here like any other bad setting.
 */
function checkDataDir(dataDir: string, env: NodeJS.ProcessEnv, where?: string): void {
  const field = env.DATA_DIR ? 'DATA_DIR' : 'dataDir';
  const abs = path.resolve(dataDir);
  for (let p = abs; ; p = path.dirname(p)) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      if (p === path.dirname(p)) return;
      continue; // not there yet: mkdir makes it
    }
    if (isDir) return;
    const message =
      p === abs
        ? `${abs} is not a directory (the SQLite store and the feed secret live there)`
        : `${abs} cannot be a directory: ${p} is a file`;
    throw configError([{ path: field, message }], where);
  }
}

/**
 * The JSON parser's complaint without its quote of the file: V8 quotes the text around an unexpected token
 * (`..."tSecret": Zq8Q~provi"...`), and a configuration file holds secrets. The place is given instead.
 */
function jsonProblem(err: Error, text: string): string {
  if (!/^Unexpected token /.test(err.message)) return scrubSecrets(err.message);
  // The shortest prefix that fails on a token (not on its end) ends at the unexpected character.
  const failsOnToken = (length: number) => {
    try {
      JSON.parse(text.slice(0, length));
      return false;
    } catch (e) {
      return /^Unexpected token /.test((e as Error).message);
    }
  };
  let fine = 0;
  let failing = text.length;
  while (failing - fine > 1) {
    const mid = (fine + failing) >> 1;
    if (failsOnToken(mid)) failing = mid;
    else fine = mid;
  }
  const before = text.slice(0, failing - 1).split('\n');
  return `unexpected character at line ${before.length} column ${before.at(-1)!.length + 1} (not quoted here: the file may hold secrets)`;
}

function finish(raw: ParsedConfig, source: Config['source'], env: NodeJS.ProcessEnv): Config {
  const where = source.kind === 'file' ? source.path : undefined;
  checkDataDir(raw.dataDir, env, where);
  const parsed = withEventTemplates(raw, env, where);
  const publicUrl = (parsed.publicUrl ?? `http://localhost:${parsed.port}`).replace(/\/+$/, '');
  const warnings: string[] = [];
  const clock = sandboxNow(env, parsed.schools, DEMO_SANDBOX.token);

  if ('problem' in clock) throw configError([clock.problem], where);
  // A default is defensible for trying rostercal on one machine, so this warns rather than refuses.
  if (parsed.publicUrl === undefined && source.kind !== 'demo')
    warnings.push(
      `PUBLIC_URL is not set${source.kind === 'file' ? ' (nor publicUrl in the config file)' : ''}: every link rostercal hands out (feed URLs, subscribe pages, links in pushed events) points at ${publicUrl}, which only this machine can reach. Set it to the address families and staff use, e.g. https://calendars.example.org`,
    );
  const runtime = runtimeSettings(env);
  // Every text scrubbed from here on cuts these out, whatever they look like (log-text.ts).
  rememberSecrets([
    runtime.adminToken,
    runtime.metricsToken,
    runtime.feedSecret,
    parsed.auth.oidc?.clientSecret,
    ...parsed.schools.map((s) => s.upstream.token),
  ]);
  return {
    ...parsed,
    publicUrl,
    publicUrlGiven: parsed.publicUrl !== undefined,
    warnings,
    source,
    ...runtime,
    sandboxNow: clock.now,
  };
}

/** The configuration listening on another port (`serve --port`): a derived publicUrl follows it. */
export function withPort(cfg: Config, port: number): Config {
  return { ...cfg, port, publicUrl: cfg.publicUrlGiven ? cfg.publicUrl : `http://localhost:${port}` };
}

/**
 * Loads the configuration: `ROSTERCAL_CONFIG` (a JSON file), else `UPSTREAM_URL` & co. for one school, else the
 * demo school. Throws ConfigError with one message naming every bad field.
 */
export async function loadConfig(env: NodeJS.ProcessEnv = process.env): Promise<Config> {
  const file = env.ROSTERCAL_CONFIG;
  if (file) {
    const abs = path.resolve(file);
    let text: string;
    try {
      text = await readFile(abs, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new ConfigError(`config: cannot read ROSTERCAL_CONFIG file ${abs}: ${code}`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new ConfigError(`config: ${abs} is not valid JSON: ${jsonProblem(err as Error, text)}`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new ConfigError(`config: ${abs} must hold a JSON object with a "schools" array`);
    }
    const merged = { ...(raw as Record<string, unknown>), ...deploymentOverrides(env) };
    oidcFromEnv(merged, env, abs);
    const parsed = parseConfig(merged, {
      where: abs,
      env,
      rename: (p) => {
        const byEnv = oidcEnvName(p, env);
        if (byEnv) return byEnv;
        const overridden = Object.entries(ENV_NAMES).find(
          ([k, v]) => p === k && !k.startsWith('schools') && env[v],
        );
        return overridden ? overridden[1] : p;
      },
    });
    return finish(parsed, { kind: 'file', path: abs }, env);
  }

  // Variables that describe a school by environment, without UPSTREAM_URL, are a mistake (a forgotten or
  // misspelt variable), not a request for the demo school: starting the demo then hides it.
  const partial = SCHOOL_ENV.filter((name) => env[name]);
  if (!env.UPSTREAM_URL && partial.length)
    throw configError([
      {
        path: 'UPSTREAM_URL',
        message: `is required: ${partial.join(', ')} ${partial.length === 1 ? 'describes' : 'describe'} a school by environment (unset ${partial.length === 1 ? 'it' : 'them'} to run the demo school)`,
      },
    ]);

  if (env.UPSTREAM_URL) {
    const raw = {
      schools: [
        {
          id: env.SCHOOL_ID || 'school',
          // No default: a made-up name ("School") would title every calendar families see.
          name: env.SCHOOL_NAME || undefined,
          upstream: { url: env.UPSTREAM_URL, token: env.UPSTREAM_TOKEN },
          timeZone: env.SCHOOL_TZ || env.TZ,
        },
      ],
      ...deploymentOverrides(env),
    };
    oidcFromEnv(raw, env);
    const parsed = parseConfig(raw, {
      env,
      rename: (p) => {
        const name = oidcEnvName(p, env) ?? ENV_NAMES[p];
        if (name === 'SCHOOL_TZ') return 'SCHOOL_TZ (the school’s IANA time zone, e.g. Europe/London)';
        if (name === 'SCHOOL_NAME') return 'SCHOOL_NAME (the school’s name, on every calendar and page)';
        return name ?? p;
      },
    });
    return finish(parsed, { kind: 'env' }, env);
  }

  const raw: Record<string, unknown> = {
    schools: [
      {
        id: DEMO_SCHOOL_ID,
        name: 'Demo School (sandbox)',
        demo: true,
        // The URL is filled in when the sandbox has started and knows its port. It runs in-process, so the
        // client may pace itself far faster than against a real service.
        upstream: {
          url: 'http://127.0.0.1/',
          token: DEMO_SANDBOX.token,
          rateLimit: { requestsPerSecond: 200, concurrency: 4 },
        },
        // The sandbox's generated school (Hillcrest College) is in Sydney.
        timeZone: DEMO_SANDBOX.timeZone,
        // The demo shows every roster, the medical one included (the sandbox's people are invented).
        rosters: { sensitive: true },
        // And lets families say "can't make it" (it writes to the in-process sandbox only).
        families: { reportAbsences: true },
      },
    ],
    ...deploymentOverrides(env),
  };
  oidcFromEnv(raw, env);
  const parsed = parseConfig(raw, { env, rename: (p) => oidcEnvName(p, env) ?? ENV_NAMES[p] ?? p });
  const misspelt = lookalikes(env);
  return finish(parsed, misspelt.length ? { kind: 'demo', misspelt } : { kind: 'demo' }, env);
}

/** The variables that choose a configuration: a misspelling of one silently means "no configuration". */
const CHOOSING = ['ROSTERCAL_CONFIG', 'UPSTREAM_URL'] as const;

/** Set variables within two letters of ROSTERCAL_CONFIG or UPSTREAM_URL, as "ROSTERCAL_CONFG (ROSTERCAL_CONFIG?)". */
function lookalikes(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const name of Object.keys(env)) {
    if (!env[name]) continue;
    const meant = CHOOSING.find((c) => c !== name && editDistance(name.toUpperCase(), c) <= 2);
    if (meant) out.push(`${name} (${meant}?)`);
  }
  return out.sort();
}

/**
 * `serve` without a configuration: the demo (invented people, a sign-in page where anyone picks who they are) only
 * when asked for with --demo, so a container whose ROSTERCAL_CONFIG is missing or misspelt refuses to start.
 */
export function demoNotAskedFor(cfg: Config): ConfigError | null {
  if (cfg.source.kind !== 'demo') return null;
  const misspelt = cfg.source.misspelt?.length
    ? ` Set but not recognised: ${cfg.source.misspelt.join(', ')}.`
    : '';
  return new ConfigError(
    `config: no configuration: neither ROSTERCAL_CONFIG (a JSON file) nor UPSTREAM_URL is set, so there is no school to serve.${misspelt} Set one (see Configuration in the README); to try the demo school instead (invented data, a sign-in page where anyone picks who they are), run \`rostercal serve --demo\` (what \`npm start\` runs).`,
  );
}

/** The configuration as it may be shown to a person or a log: every secret replaced. */
export function describeConfig(cfg: Config): Record<string, unknown> {
  return {
    source: cfg.source.kind === 'file' ? `file ${cfg.source.path}` : cfg.source.kind,
    publicUrl: cfg.publicUrl,
    port: cfg.port,
    store: cfg.databaseUrl ? `postgres ${redactUrl(cfg.databaseUrl)}` : `sqlite in ${cfg.dataDir}`,
    eventTemplatesDir: cfg.eventTemplatesDir ?? 'built-in wording only',
    schools: cfg.schools.map((s) => ({
      id: s.id,
      name: s.name,
      demo: s.demo,
      timeZone: s.timeZone,
      upstream: {
        url: redactUrl(s.upstream.url),
        token: '[redacted]',
        ...(s.upstream.rateLimit ? { rateLimit: s.upstream.rateLimit } : {}),
      },
      syncWindow: s.syncWindow,
      schedules: s.schedules,
      deletionGuard: s.deletionGuard,
      rosters: s.rosters,
      families: s.families,
      targets: s.targets.length,
    })),
    auth: {
      ...cfg.auth,
      oidc: cfg.auth.oidc ? { ...cfg.auth.oidc, clientSecret: '[redacted]' } : null,
    },
  };
}

/** Drops a password (and any user name) from a URL; query strings may hold keys, so they go too. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = 'redacted';
    if (u.search) u.search = '?…';
    return u.toString();
  } catch {
    return '[unparseable URL]';
  }
}
