// The `auth` part of the configuration: the school's identity provider (`auth.oidc`, or OIDC_ISSUER,
// OIDC_CLIENT_ID and OIDC_CLIENT_SECRET, which win over the file), who may print medical and guardian sheets,
// session lengths and how long the audit log is kept. src/config.ts validates it with authSchema, lets the
// environment in with withOidcFromEnv and types it with resolveAuth; nobody parses it again.
import { z } from 'zod';
import { type Problem, resolveSecret, secret } from '../validation.ts';
import { DEFAULT_SENSITIVE_ROLES, type SensitiveRole } from './roles.ts';

export interface OidcSettings {
  issuer: string;
  clientId: string;
  /** null: a public client (PKCE alone). */
  clientSecret: string | null;
  /** Extra scopes besides `openid email profile`. */
  scopes: string[];
  /** Lower-case e-mail domains allowed to sign in; empty: any (the upstream staff list still decides). */
  allowedDomains: string[];
}

function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)
  );
}

/** Issuers are https; plain http only on loopback (tests, the demo). Returns a problem or null. */
export function issuerProblem(issuer: string): string | null {
  let u: URL;
  try {
    u = new URL(issuer);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && isLoopback(u.hostname)) return null;
  if (u.protocol === 'http:')
    return 'must be an https URL: plain http only on loopback (localhost, 127.0.0.1, [::1]), where nobody else can read the tokens';
  return 'must be an https URL';
}

const issuer = z.string().superRefine((value, ctx) => {
  const problem = issuerProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

// RFC 6749 scope-token: printable ASCII without space, quote or backslash.
const scope = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, 'must be one scope name (no spaces)');

const domain = z
  .string()
  .transform((d) => d.trim().replace(/^@/, '').toLowerCase())
  .pipe(z.string().regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/, 'must be an e-mail domain such as school.org'));

export const oidcSchema = z.strictObject({
  issuer,
  clientId: z.string().trim().min(1, 'must not be empty'),
  /** The client secret itself, or `env:NAME`. */
  clientSecret: secret,
  allowedDomains: z.array(domain).default([]),
  /** Asked for besides `openid email profile`. */
  scopes: z.array(scope).default([]),
});

export const SENSITIVE_ROLES = ['admin', 'manager', 'assigned', 'staff'] as const satisfies SensitiveRole[];

export const authSchema = z
  .strictObject({
    oidc: oidcSchema.optional(),
    /**
     * Who may print a template with medical or guardian columns (for a team they may see): admins, managers,
     * the team's assigned staff, or any staff who may see the team.
     */
    sensitiveRoles: z
      .array(z.enum(SENSITIVE_ROLES))
      .min(1, 'needs at least one role (admin, manager, assigned, staff)')
      .default([...DEFAULT_SENSITIVE_ROLES]),
    /** Audit records older than this are pruned (once a day). */
    auditRetentionDays: z.number().int().positive().default(400),
    sessionIdleHours: z.number().positive().default(8),
    sessionMaxHours: z.number().positive().default(24),
    /** Named on refusal pages: whom to ask ("the IT office, it@school.org"). */
    helpContact: z.string().trim().min(1).max(200).optional(),
  })
  .superRefine((a, ctx) => {
    if (a.sessionIdleHours > a.sessionMaxHours)
      ctx.addIssue({
        code: 'custom',
        path: ['sessionIdleHours'],
        message: `must not exceed sessionMaxHours (${a.sessionMaxHours})`,
      });
  })
  .prefault({});

/** The typed `auth` settings every consumer gets. */
export interface AuthSettings {
  /** null: no identity provider (only ADMIN_TOKEN, or in the demo its own provider). */
  oidc: OidcSettings | null;
  sensitiveRoles: SensitiveRole[];
  auditRetentionDays: number;
  sessionIdleHours: number;
  sessionMaxHours: number;
  helpContact: string | null;
}

export const OIDC_ENV = {
  issuer: 'OIDC_ISSUER',
  clientId: 'OIDC_CLIENT_ID',
  clientSecret: 'OIDC_CLIENT_SECRET',
} as const;

/** How errors in `auth.oidc` fields read when the environment gave them. */
export function oidcEnvName(path: string, env: NodeJS.ProcessEnv): string | null {
  for (const [field, name] of Object.entries(OIDC_ENV))
    if (path === `auth.oidc.${field}` && env[name]) return name;
  return null;
}

/**
 * The raw configuration with OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET laid over `auth.oidc` (the
 * file's allowedDomains and scopes stay). The three go together: a partial set names what is missing.
 */
export function withOidcFromEnv(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): Problem[] | null {
  const given = Object.entries(OIDC_ENV).filter(([, name]) => env[name]?.trim());
  if (given.length === 0) return null;
  if (given.length < 3) {
    const missing = Object.values(OIDC_ENV).filter((name) => !env[name]?.trim());
    const set = given.map(([, name]) => name).join(' and ');
    return missing.map((name) => ({
      path: name,
      message: `is not set, but ${set} ${given.length === 1 ? 'is' : 'are'}: the three go together`,
    }));
  }
  const auth = isRecord(raw.auth) ? raw.auth : {};
  const oidc = isRecord(auth.oidc) ? auth.oidc : {};
  raw.auth = {
    ...auth,
    oidc: {
      ...oidc,
      issuer: env.OIDC_ISSUER!.trim(),
      clientId: env.OIDC_CLIENT_ID!.trim(),
      clientSecret: env.OIDC_CLIENT_SECRET!,
    },
  };
  return [];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The parsed `auth` section typed, its secret resolved; unresolved `env:NAME` is added to `problems`. */
export function resolveAuth(
  a: z.output<typeof authSchema>,
  env: NodeJS.ProcessEnv,
  problems: Problem[],
): AuthSettings {
  const oidc = a.oidc
    ? {
        issuer: a.oidc.issuer,
        clientId: a.oidc.clientId,
        // OIDC_CLIENT_SECRET is the secret itself, even if it happens to start with `env:`.
        clientSecret:
          a.oidc.clientSecret === env[OIDC_ENV.clientSecret]
            ? a.oidc.clientSecret
            : resolveSecret(a.oidc.clientSecret, env, 'auth.oidc.clientSecret', problems),
        allowedDomains: [...new Set(a.oidc.allowedDomains)],
        scopes: a.oidc.scopes.filter((s) => !['openid', 'email', 'profile'].includes(s)),
      }
    : null;
  return {
    oidc,
    sensitiveRoles: [...new Set(a.sensitiveRoles)],
    auditRetentionDays: a.auditRetentionDays,
    sessionIdleHours: a.sessionIdleHours,
    sessionMaxHours: a.sessionMaxHours,
    helpContact: a.helpContact ?? null,
  };
}
