// Push targets: where a school's sessions are pushed (Google or Outlook), for whom (scope, ids, audience) and
// how to reach the provider. src/config.ts validates `schools[].targets` with targetsSchema and turns each list
// into typed targets with resolveTargets (which resolves `env:NAME` secrets and reads service-account keys), so
// the configuration carries them typed and nobody parses them again. Errors name every bad field
// (`schools[0].targets[1].outlook.clientSecret: …`); secret values never appear in messages.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Audience } from '../calendar/types.ts';
import type { Id } from '../domain/types.ts';
import type { FeedScope } from '../store/types.ts';
import {
  configError,
  formatPath,
  httpsUrl,
  httpUrl,
  issueProblem,
  type Problem,
  resolveSecret,
  secret,
} from '../validation.ts';

const slug = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'must be 1-63 letters, digits, "-" or "_"');

const backoffSchema = z
  .strictObject({
    baseMs: z.number().nonnegative().default(1000),
    capMs: z.number().positive().default(32_000),
    maxRetries: z.number().int().nonnegative().default(8),
  })
  .prefault({});

/**
 * How long one HTTP request to the provider may take, answer included, before it is given up and retried like
 * a dropped connection. Real Graph and Google now and then accept a request and never answer; without a limit
 * the push waits for ever and, serialised per target, every later push of the target is skipped. A minute is
 * far above a slow healthy answer (a full $batch or a 50-part Google batch takes seconds).
 */
const requestTimeoutMs = z.number().int().min(100).max(600_000).default(60_000);

const googleSchema = z.strictObject({
  /** googleapis rootUrl: a proxy or an emulator instead of https://www.googleapis.com/. */
  rootUrl: httpUrl.default('https://www.googleapis.com/'),
  auth: z
    .strictObject({
      /** A static OAuth access token (or `env:NAME`) standing in for credentials. */
      accessToken: secret.optional(),
      /** Path of the service-account JSON key. */
      keyFile: z.string().min(1).optional(),
      /** The service-account JSON key itself, normally `env:NAME`. */
      key: secret.optional(),
      /** Domain-wide delegation: act as this user (owner of the calendars rostercal creates). */
      subject: z.email('must be an email address').optional(),
      /** OAuth token endpoint (default: the key's token_uri, else https://oauth2.googleapis.com/token). */
      tokenUri: httpUrl.optional(),
    })
    .superRefine((a, ctx) => {
      const given = [a.accessToken, a.keyFile, a.key].filter((x) => x !== undefined).length;
      if (given !== 1)
        ctx.addIssue({
          code: 'custom',
          message: 'give exactly one of accessToken, keyFile or key',
        });
    }),
  calendars: z
    .strictObject({
      /**
       * created: one calendar per team/activity/student/staff member, created and named by rostercal in the
       * account of `auth` (the service account or the delegation subject);
       * primary / secondary: staff scope only, through domain-wide delegation: each staff member's primary
       * calendar, or a calendar named `name` created in their account.
       */
      mode: z.enum(['created', 'primary', 'secondary']).default('created'),
      /** Name template: {name} (team, activity or person), {school}. */
      name: z.string().min(1).default('{name} · {school}'),
      /** ACL rules added to calendars rostercal creates; `value` may use {email} (the staff member's). */
      share: z
        .array(
          z
            .strictObject({
              role: z.enum(['freeBusyReader', 'reader', 'writer']),
              type: z.enum(['default', 'user', 'group', 'domain']),
              value: z.string().min(1).optional(),
            })
            .superRefine((r, ctx) => {
              if (r.type !== 'default' && !r.value)
                ctx.addIssue({
                  code: 'custom',
                  path: ['value'],
                  message: `is required for type "${r.type}"`,
                });
              if (r.type === 'default' && r.value)
                ctx.addIssue({
                  code: 'custom',
                  path: ['value'],
                  message: 'must be absent for type "default"',
                });
            }),
        )
        .default([]),
      /**
       * Families may add these calendars to their own Google accounts: rostercal makes each one publicly
       * readable (ACL `reader` for `default`, set through the API on every calendar it keeps, new or existing),
       * and the feed's landing page offers "Add to Google Calendar — updates within minutes" with it. Only for
       * team and activity targets that speak to guardians or students.
       */
      familiesMayAdd: z.boolean().default(false),
    })
    .prefault({}),
  /** Writes per second per Google account, kept below the per-user quota. */
  writesPerSecond: z.number().positive().default(5),
  /** Calendars worked on at once (and batches in flight per Google account). */
  concurrency: z.number().int().min(1).max(32).default(4),
  /** Writes per batch request (Google takes up to 50); 1 sends each write on its own. */
  batchSize: z.number().int().min(1).max(50).default(50),
  backoff: backoffSchema,
  requestTimeoutMs,
  /** How long a calendar rests after a quotaExceeded answer. */
  pauseMinutes: z.number().positive().default(360),
});

const outlookSchema = z
  .strictObject({
    /** Graph root (without /v1.0): a proxy or an emulator instead of https://graph.microsoft.com. */
    baseUrl: httpsUrl.default('https://graph.microsoft.com'),
    /** Entra authority host for the client-credentials grant. */
    authorityHost: httpsUrl.default('https://login.microsoftonline.com'),
    tenantId: z.string().min(1).optional(),
    clientId: z.string().min(1).optional(),
    clientSecret: secret.optional(),
    /** A static access token (or `env:NAME`) standing in for the app credentials. */
    accessToken: secret.optional(),
    /** The dedicated calendar in each mailbox, created if missing. */
    calendarName: z.string().min(1).max(255).default('School activities'),
    /** Mailbox address template: {email}, {sisId}, {externalId}, {id}, {firstName}, {lastName}. */
    mailbox: z.string().min(1).default('{email}'),
    /** Sub-requests per $batch (Graph allows 20). */
    batchSize: z.number().int().min(1).max(20).default(20),
    /** Concurrent requests per mailbox (Exchange allows 4). */
    maxConcurrentPerMailbox: z.number().int().min(1).max(4).default(4),
    /** $batch requests in flight at once. */
    parallelBatches: z.number().int().min(1).max(16).default(4),
    backoff: backoffSchema,
    requestTimeoutMs,
  })
  .superRefine((o, ctx) => {
    if (o.accessToken !== undefined) return;
    for (const key of ['tenantId', 'clientId', 'clientSecret'] as const) {
      if (o[key] === undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: 'is required (or give accessToken)' });
    }
  });

const common = {
  id: slug,
  scope: z.enum(['team', 'staff', 'student', 'activity']),
  /** Which teams/staff/students/activities (by upstream id); all by default. */
  ids: z
    .array(z.number().int().positive())
    .min(1, 'must list at least one id, or be left out for all')
    .optional(),
  /** Who the events speak to; from the scope unless set (staff → staff, others → guardian). */
  audience: z.enum(['guardian', 'student', 'staff']).optional(),
  window: z
    .strictObject({
      daysBack: z.number().int().nonnegative().default(14),
      daysAhead: z.number().int().positive().default(365),
    })
    .prefault({}),
  /** Cancelled sessions: kept and marked (the projection's "Cancelled: …" title), or removed. */
  cancelled: z.enum(['show', 'remove']).default('show'),
  /** Full comparison with the remote calendar at least this often (and whenever the mapping is missing). */
  reconcileEveryHours: z.number().positive().default(24),
  /** A remote listing this much smaller than what we believe is there is not trusted. */
  maxShrinkFraction: z.number().min(0).max(1).default(0.5),
};

export const googleTargetSchema = z.strictObject({
  ...common,
  provider: z.literal('google'),
  google: googleSchema,
});
export const outlookTargetSchema = z.strictObject({
  ...common,
  provider: z.literal('outlook'),
  outlook: outlookSchema,
});

export const targetSchema = z
  .discriminatedUnion('provider', [googleTargetSchema, outlookTargetSchema], {
    error: (iss) => (iss.code === 'invalid_union' ? 'must be "google" or "outlook"' : undefined),
  })
  .superRefine((t, ctx) => {
    if (t.provider === 'outlook' && t.scope !== 'staff' && t.scope !== 'student')
      ctx.addIssue({
        code: 'custom',
        path: ['scope'],
        message: 'outlook targets push into mailboxes: scope must be "staff" or "student"',
      });
    if (t.provider === 'google' && t.google.calendars.familiesMayAdd) {
      // A fresh path per issue: zod prefixes the array index onto the path it is given.
      const where = () => ['google', 'calendars', 'familiesMayAdd'];
      if (t.scope !== 'team' && t.scope !== 'activity')
        ctx.addIssue({
          code: 'custom',
          path: where(),
          message: `makes calendars public: scope must be "team" or "activity", not "${t.scope}"`,
        });
      if ((t.audience ?? DEFAULT_AUDIENCE[t.scope]) === 'staff')
        ctx.addIssue({
          code: 'custom',
          path: where(),
          message: 'makes calendars public: the audience must be "guardian" or "student", not "staff"',
        });
    }
    if (t.provider === 'google' && t.google.calendars.mode !== 'created') {
      if (t.scope !== 'staff')
        ctx.addIssue({
          code: 'custom',
          path: ['google', 'calendars', 'mode'],
          message: `"${t.google.calendars.mode}" uses each staff member's own account: scope must be "staff"`,
        });
      if (t.google.auth.accessToken !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['google', 'auth'],
          message: `calendars.mode "${t.google.calendars.mode}" acts as each staff member through domain-wide delegation and needs a service-account key (keyFile or key)`,
        });
    }
  });

export const targetsSchema = z.array(targetSchema).superRefine((list, ctx) => {
  const seen = new Set<string>();
  list.forEach((t, i) => {
    if (seen.has(t.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `"${t.id}" is used twice` });
    seen.add(t.id);
  });
});

type ParsedTarget = z.output<typeof targetSchema>;
type ParsedGoogle = z.output<typeof googleSchema>;
type ParsedOutlook = z.output<typeof outlookSchema>;

export interface ServiceAccountKey {
  clientEmail: string;
  privateKey: string;
  tokenUri: string;
}

export type GoogleAuth =
  | { kind: 'token'; accessToken: string }
  | { kind: 'serviceAccount'; key: ServiceAccountKey; subject: string | null };

export interface GoogleSettings extends Omit<ParsedGoogle, 'auth'> {
  auth: GoogleAuth;
}

export type OutlookAuth =
  | { kind: 'token'; accessToken: string }
  | { kind: 'clientSecret'; tenantId: string; clientId: string; clientSecret: string };

export interface OutlookSettings
  extends Omit<ParsedOutlook, 'tenantId' | 'clientId' | 'clientSecret' | 'accessToken'> {
  auth: OutlookAuth;
}

interface TargetCommon {
  id: string;
  scope: FeedScope;
  ids: Id[] | null;
  audience: Audience;
  window: { daysBack: number; daysAhead: number };
  cancelled: 'show' | 'remove';
  reconcileEveryHours: number;
  maxShrinkFraction: number;
}

export interface GoogleTarget extends TargetCommon {
  provider: 'google';
  google: GoogleSettings;
}
export interface OutlookTarget extends TargetCommon {
  provider: 'outlook';
  outlook: OutlookSettings;
}
export type PushTargetConfig = GoogleTarget | OutlookTarget;

export const DEFAULT_AUDIENCE: Record<FeedScope, Audience> = {
  team: 'guardian',
  student: 'guardian',
  activity: 'guardian',
  staff: 'staff',
};

const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';

function basePath(path: string): PropertyKey[] {
  // `schools[0].targets` → ['schools', 0, 'targets'] so that formatPath renders issue paths the same way.
  const out: PropertyKey[] = [];
  for (const part of path.split('.')) {
    const re = /([^[\]]+)|\[(\d+)\]/g;
    for (let m = re.exec(part); m; m = re.exec(part)) out.push(m[1] !== undefined ? m[1] : Number(m[2]));
  }
  return out;
}

function parseKey(text: string, path: string, problems: Problem[], tokenUri: string | undefined) {
  let json: { type?: unknown; client_email?: unknown; private_key?: unknown; token_uri?: unknown };
  try {
    json = JSON.parse(text);
  } catch {
    problems.push({ path, message: 'is not a JSON service-account key' });
    return null;
  }
  if (typeof json.client_email !== 'string' || typeof json.private_key !== 'string') {
    problems.push({
      path,
      message: 'is not a service-account key (client_email and private_key are required)',
    });
    return null;
  }
  return {
    clientEmail: json.client_email,
    privateKey: json.private_key,
    tokenUri: tokenUri ?? (typeof json.token_uri === 'string' ? json.token_uri : DEFAULT_TOKEN_URI),
  };
}

function resolveTarget(
  t: ParsedTarget,
  at: string,
  env: NodeJS.ProcessEnv,
  problems: Problem[],
): PushTargetConfig {
  const common: TargetCommon = {
    id: t.id,
    scope: t.scope,
    ids: t.ids ?? null,
    audience: t.audience ?? DEFAULT_AUDIENCE[t.scope],
    window: t.window,
    cancelled: t.cancelled,
    reconcileEveryHours: t.reconcileEveryHours,
    maxShrinkFraction: t.maxShrinkFraction,
  };
  if (t.provider === 'google') {
    const { auth: a, ...rest } = t.google;
    let auth: GoogleAuth = { kind: 'token', accessToken: '' };
    if (a.accessToken !== undefined) {
      auth = {
        kind: 'token',
        accessToken: resolveSecret(a.accessToken, env, `${at}.google.auth.accessToken`, problems),
      };
    } else {
      let text = '';
      let keyPath = `${at}.google.auth.key`;
      if (a.keyFile !== undefined) {
        keyPath = `${at}.google.auth.keyFile`;
        try {
          text = readFileSync(a.keyFile, 'utf8');
        } catch (err) {
          problems.push({
            path: keyPath,
            message: `cannot read ${a.keyFile}: ${(err as NodeJS.ErrnoException).code ?? err}`,
          });
        }
      } else if (a.key !== undefined) {
        text = resolveSecret(a.key, env, keyPath, problems);
      }
      const key = text ? parseKey(text, keyPath, problems, a.tokenUri) : null;
      if (key) auth = { kind: 'serviceAccount', key, subject: a.subject ?? null };
    }
    return { ...common, provider: 'google', google: { ...rest, auth } };
  }
  const { tenantId, clientId, clientSecret, accessToken, ...rest } = t.outlook;
  const auth: OutlookAuth =
    accessToken !== undefined
      ? { kind: 'token', accessToken: resolveSecret(accessToken, env, `${at}.outlook.accessToken`, problems) }
      : {
          kind: 'clientSecret',
          tenantId: tenantId!,
          clientId: clientId!,
          clientSecret: resolveSecret(clientSecret!, env, `${at}.outlook.clientSecret`, problems),
        };
  return { ...common, provider: 'outlook', outlook: { ...rest, auth } };
}

export type ParsedTargets = z.output<typeof targetsSchema>;

/**
 * Typed targets from a list targetsSchema accepted at `path` (e.g. `schools[0].targets`): `env:NAME` secrets
 * resolved and key files read; what cannot be resolved is added to `problems`.
 */
export function resolveTargets(
  list: ParsedTargets,
  path: readonly PropertyKey[],
  env: NodeJS.ProcessEnv,
  problems: Problem[],
): PushTargetConfig[] {
  return list.map((t, i) => resolveTarget(t, formatPath([...path, i]), env, problems));
}

/**
 * Validates a `targets` list on its own (benches, tests, child processes), reported as found at `path`.
 * Throws ConfigError naming every offending field.
 */
export function parseTargets(raw: unknown, path: string, env: NodeJS.ProcessEnv = {}): PushTargetConfig[] {
  const base = basePath(path);
  const result = targetsSchema.safeParse(raw ?? []);
  if (!result.success) throw configError(result.error.issues.map((i) => issueProblem(i, base)));
  const problems: Problem[] = [];
  const targets = resolveTargets(result.data, base, env, problems);
  if (problems.length) throw configError(problems);
  return targets;
}
