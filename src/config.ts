// rostercal's configuration: a JSON file (ROSTERCAL_CONFIG) validated with zod, or environment variables that
// describe one school, or — with neither — the demo school served by the in-process sandbox.
// A bad configuration stops start-up with one message naming each offending field; secrets never print.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import cron from 'node-cron';
import { z } from 'zod';
import { parseTargets } from './push/config.ts';

/** Thrown for any configuration problem; its message is meant to be printed as is. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function isKnownTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const timeZone = z.string().superRefine((tz, ctx) => {
  if (!isKnownTimeZone(tz)) ctx.addIssue({ code: 'custom', message: `"${tz}" is not a known time zone` });
});

const cronExpression = z.string().superRefine((expr, ctx) => {
  if (!cron.validate(expr))
    ctx.addIssue({ code: 'custom', message: `"${expr}" is not a valid cron expression` });
});

/** A URL without echoing it back in errors: it may carry credentials. */
const httpUrl = z.string().superRefine((value, ctx) => {
  let ok = false;
  try {
    const u = new URL(value);
    ok = u.protocol === 'http:' || u.protocol === 'https:';
  } catch {}
  if (!ok) ctx.addIssue({ code: 'custom', message: 'is not an http(s) URL' });
});

const positiveInt = z.number().int().positive();

export const upstreamSchema = z.strictObject({
  url: httpUrl,
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
      incremental: cronExpression.default('*/10 * * * *'),
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
      /** `updatedAfter` is the previous run's start minus this, for clock skew between us and upstream. */
      overlapSeconds: z.number().nonnegative().default(120),
      /** Single-team reads in flight at once (full runs read every team for medical and guardian data). */
      teamConcurrency: positiveInt.default(4),
    })
    .prefault({}),
  /** Push targets: validated by the push module, which owns their shape. */
  targets: z.array(z.looseObject({})).default([]),
});

export const configSchema = z
  .strictObject({
    schools: z.array(schoolSchema).min(1, 'needs at least one school'),
    publicUrl: httpUrl.optional(),
    port: z.number().int().min(0).max(65535).default(8080),
    dataDir: z.string().min(1).default('./data'),
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
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
type ParsedConfig = z.output<typeof configSchema>;
export type SchoolConfig = ParsedConfig['schools'][number];
export type UpstreamConfig = SchoolConfig['upstream'];

export interface Config extends Omit<ParsedConfig, 'publicUrl'> {
  /** Where people reach the web server; defaults to http://localhost:PORT. */
  publicUrl: string;
  /** Where the configuration came from: for `describeConfig` and the admin pages. */
  source: { kind: 'file'; path: string } | { kind: 'env' } | { kind: 'demo' };
}

/** The demo school: the sandbox's generated school, started in-process by `serve` and `sync`. */
export const DEMO_SCHOOL_ID = 'demo';
export const DEMO_SANDBOX = {
  seed: 42,
  scale: 'school',
  token: 'demo-sandbox-token',
  timeZone: 'Australia/Sydney',
} as const;

/** Renders a zod issue path the way a person writes it: `schools[0].upstream.url`. */
export function formatPath(p: readonly PropertyKey[]): string {
  let out = '';
  for (const part of p) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function issueMessage(issue: z.core.$ZodIssue): { path: string; message: string } {
  if (issue.code === 'unrecognized_keys') {
    const base = formatPath(issue.path);
    const keys = issue.keys.map((k) => (base ? `${base}.${k}` : k));
    return { path: keys.join(', '), message: issue.keys.length > 1 ? 'unknown fields' : 'unknown field' };
  }
  if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    return { path: formatPath(issue.path), message: 'is required' };
  }
  return { path: formatPath(issue.path), message: issue.message.replace(/^Invalid input: /, '') };
}

function configError(problems: { path: string; message: string }[], where: string): ConfigError {
  const lines = problems.map((p) => `config: ${p.path ? `${p.path}: ` : ''}${p.message}`);
  const text = lines.length === 1 ? lines[0]! : `${lines.join('\n')}`;
  return new ConfigError(where ? `${text}\n(in ${where})` : text);
}

/** Validates raw configuration; the paths in errors are translated by `rename` (env mode names variables). */
export function parseConfig(
  raw: unknown,
  opts: { rename?: (path: string) => string; where?: string } = {},
): ParsedConfig {
  const result = configSchema.safeParse(raw);
  if (result.success) return result.data;
  const problems = result.error.issues.map(issueMessage).map((p) => ({
    ...p,
    path: opts.rename ? opts.rename(p.path) : p.path,
  }));
  throw configError(problems, opts.where ?? '');
}

/** `env:NAME` token references become the variable's value; a missing variable is a config error. */
function resolveSecrets(cfg: ParsedConfig, env: NodeJS.ProcessEnv, where: string): void {
  const problems: { path: string; message: string }[] = [];
  cfg.schools.forEach((school, i) => {
    const ref = /^env:(.+)$/.exec(school.upstream.token);
    if (!ref) return;
    const name = ref[1]!;
    const value = env[name];
    if (!value)
      problems.push({
        path: `schools[${i}].upstream.token`,
        message: `environment variable ${name} is not set`,
      });
    else school.upstream.token = value;
  });
  if (problems.length) throw configError(problems, where);
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
};

function parsePort(value: string | undefined, name: string): number | string | undefined {
  if (value === undefined || value === '') return undefined;
  // Leave non-numbers as strings so the schema reports them under the variable's name.
  return /^\d+$/.test(value) ? Number(value) : `${name}=${value}`;
}

/** Deployment settings from the environment win over the file: the same file serves several environments. */
function deploymentOverrides(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (env.DATABASE_URL) o.databaseUrl = env.DATABASE_URL;
  if (env.DATA_DIR) o.dataDir = env.DATA_DIR;
  const port = parsePort(env.PORT, 'PORT');
  if (port !== undefined) o.port = port;
  if (env.PUBLIC_URL) o.publicUrl = env.PUBLIC_URL;
  return o;
}

function finish(parsed: ParsedConfig, source: Config['source']): Config {
  const publicUrl = (parsed.publicUrl ?? `http://localhost:${parsed.port}`).replace(/\/+$/, '');
  return { ...parsed, publicUrl, source };
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
      throw new ConfigError(`config: ${abs} is not valid JSON: ${(err as Error).message}`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw new ConfigError(`config: ${abs} must hold a JSON object with a "schools" array`);
    }
    const merged = { ...(raw as Record<string, unknown>), ...deploymentOverrides(env) };
    const parsed = parseConfig(merged, {
      where: abs,
      rename: (p) => {
        const overridden = Object.entries(ENV_NAMES).find(
          ([k, v]) => p === k && !k.startsWith('schools') && env[v],
        );
        return overridden ? overridden[1] : p;
      },
    });
    resolveSecrets(parsed, env, abs);
    // Push targets are validated by their owner, src/push/config.ts, so a bad one stops start-up here too.
    parsed.schools.forEach((s, i) => {
      try {
        parseTargets(s.targets, `schools[${i}].targets`, env);
      } catch (err) {
        if (err instanceof ConfigError) throw new ConfigError(`${err.message}\n(in ${abs})`);
        throw err;
      }
    });
    return finish(parsed, { kind: 'file', path: abs });
  }

  if (env.UPSTREAM_URL) {
    const raw = {
      schools: [
        {
          id: env.SCHOOL_ID || 'school',
          name: env.SCHOOL_NAME || 'School',
          upstream: { url: env.UPSTREAM_URL, token: env.UPSTREAM_TOKEN },
          timeZone: env.SCHOOL_TZ || env.TZ,
        },
      ],
      ...deploymentOverrides(env),
    };
    const parsed = parseConfig(raw, {
      rename: (p) => {
        const name = ENV_NAMES[p];
        if (name === 'SCHOOL_TZ') return 'SCHOOL_TZ (the school’s IANA time zone, e.g. Europe/London)';
        return name ?? p;
      },
    });
    return finish(parsed, { kind: 'env' });
  }

  const parsed = parseConfig(
    {
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
        },
      ],
      ...deploymentOverrides(env),
    },
    { rename: (p) => ENV_NAMES[p] ?? p },
  );
  return finish(parsed, { kind: 'demo' });
}

/** The configuration as it may be shown to a person or a log: every secret replaced. */
export function describeConfig(cfg: Config): Record<string, unknown> {
  return {
    source: cfg.source.kind === 'file' ? `file ${cfg.source.path}` : cfg.source.kind,
    publicUrl: cfg.publicUrl,
    port: cfg.port,
    store: cfg.databaseUrl ? `postgres ${redactUrl(cfg.databaseUrl)}` : `sqlite in ${cfg.dataDir}`,
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
      targets: s.targets.length,
    })),
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
