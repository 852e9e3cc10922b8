// The `auth` part of the configuration (identity/settings.ts): the issuer https but on loopback, scopes and e-mail
// domains as written, sessions whose idle length fits in their maximum, OIDC_* from the environment laid over the
// file (all three or a problem naming the missing), and the typed settings with the secret resolved.
import { describe, expect, it } from 'vitest';
import {
  authSchema,
  issuerProblem,
  oidcEnvName,
  resolveAuth,
  withOidcFromEnv,
} from '../../src/identity/settings.ts';
import { issueProblem, type Problem } from '../../src/validation.ts';

const oidc = { issuer: 'https://idp.school.test', clientId: 'rostercal', clientSecret: 'env:IDP_SECRET' };
const problemsOf = (auth: unknown) => {
  const r = authSchema.safeParse(auth);
  return r.success ? [] : r.error.issues.map((i) => issueProblem(i, ['auth']));
};

describe('issuerProblem', () => {
  it('takes https anywhere and plain http on loopback only', () => {
    for (const ok of [
      'https://idp.school.test',
      'http://localhost:9000',
      'http://127.0.0.1:4000/realms/x',
      'http://[::1]:80',
    ])
      expect(issuerProblem(ok), ok).toBeNull();
    expect(issuerProblem('http://idp.school.test')).toMatch(
      /^must be an https URL: plain http only on loopback/,
    );
    expect(issuerProblem('http://127.0.0.1.nip.io')).toMatch(/plain http only on loopback/);
    expect(issuerProblem('ftp://idp.school.test')).toBe('must be an https URL');
    expect(issuerProblem('idp.school.test')).toBe('is not a URL');
  });
});

describe('authSchema', () => {
  it('fills in the defaults for a missing section', () => {
    expect(authSchema.parse(undefined)).toEqual({
      sensitiveRoles: ['admin', 'assigned'],
      auditRetentionDays: 400,
      sessionIdleHours: 8,
      sessionMaxHours: 24,
    });
  });

  it('reads e-mail domains as written by people, and refuses what is not one', () => {
    const parsed = authSchema.parse({
      oidc: { ...oidc, allowedDomains: [' @School.TEST ', 'staff.school.test'] },
    });
    expect(parsed.oidc?.allowedDomains).toEqual(['school.test', 'staff.school.test']);
    expect(problemsOf({ oidc: { ...oidc, allowedDomains: ['localhost'] } })).toEqual([
      { path: 'auth.oidc.allowedDomains[0]', message: 'must be an e-mail domain such as school.org' },
    ]);
  });

  it('refuses a scope with a space, an insecure issuer, an idle length past the maximum, no role', () => {
    expect(problemsOf({ oidc: { ...oidc, scopes: ['groups', 'read write'] } })).toEqual([
      { path: 'auth.oidc.scopes[1]', message: 'must be one scope name (no spaces)' },
    ]);
    expect(problemsOf({ oidc: { ...oidc, issuer: 'http://idp.school.test' } })[0]?.path).toBe(
      'auth.oidc.issuer',
    );
    expect(problemsOf({ sessionIdleHours: 30 })).toEqual([
      { path: 'auth.sessionIdleHours', message: 'must not exceed sessionMaxHours (24)' },
    ]);
    expect(problemsOf({ sessionIdleHours: 30, sessionMaxHours: 48 })).toEqual([]);
    expect(problemsOf({ sensitiveRoles: [] })).toEqual([
      { path: 'auth.sensitiveRoles', message: 'needs at least one role (admin, manager, assigned, staff)' },
    ]);
    expect(problemsOf({ oidc: { ...oidc, clientId: '  ' } })[0]?.path).toBe('auth.oidc.clientId');
  });
});

describe('withOidcFromEnv', () => {
  const env = {
    OIDC_ISSUER: ' https://env-idp.test ',
    OIDC_CLIENT_ID: 'from-env',
    OIDC_CLIENT_SECRET: 'env:LOOKS_LIKE_A_REF',
  };

  it('lays the three over the file, keeping its domains and scopes', () => {
    const raw: Record<string, unknown> = {
      auth: { oidc: { ...oidc, allowedDomains: ['school.test'] }, sessionMaxHours: 12 },
    };
    expect(withOidcFromEnv(raw, env)).toEqual([]);
    expect(raw.auth).toEqual({
      sessionMaxHours: 12,
      oidc: {
        issuer: 'https://env-idp.test',
        clientId: 'from-env',
        clientSecret: 'env:LOOKS_LIKE_A_REF',
        allowedDomains: ['school.test'],
      },
    });
    const bare: Record<string, unknown> = {};
    withOidcFromEnv(bare, env);
    expect((bare.auth as { oidc: { clientId: string } }).oidc.clientId).toBe('from-env');
  });

  it('leaves the file alone without them, and names what is missing from a partial set', () => {
    const raw = { auth: { oidc } };
    expect(withOidcFromEnv(raw, { OIDC_ISSUER: '  ' })).toBeNull();
    expect(raw).toEqual({ auth: { oidc } });
    expect(withOidcFromEnv({}, { OIDC_ISSUER: 'https://x.test' })).toEqual([
      { path: 'OIDC_CLIENT_ID', message: 'is not set, but OIDC_ISSUER is: the three go together' },
      { path: 'OIDC_CLIENT_SECRET', message: 'is not set, but OIDC_ISSUER is: the three go together' },
    ]);
    expect(withOidcFromEnv({}, { OIDC_ISSUER: 'https://x.test', OIDC_CLIENT_SECRET: 's' })).toEqual([
      {
        path: 'OIDC_CLIENT_ID',
        message: 'is not set, but OIDC_ISSUER and OIDC_CLIENT_SECRET are: the three go together',
      },
    ]);
  });

  it('says which variable an error in auth.oidc came from', () => {
    expect(oidcEnvName('auth.oidc.issuer', env)).toBe('OIDC_ISSUER');
    expect(oidcEnvName('auth.oidc.issuer', {})).toBeNull();
    expect(oidcEnvName('auth.oidc.scopes', env)).toBeNull();
  });
});

describe('resolveAuth', () => {
  it('resolves the secret, drops the scopes always asked for and repeats', () => {
    const problems: Problem[] = [];
    const parsed = authSchema.parse({
      oidc: { ...oidc, scopes: ['openid', 'groups', 'email'], allowedDomains: ['a.test', 'A.test'] },
      sensitiveRoles: ['admin', 'admin', 'staff'],
      helpContact: ' the IT office ',
    });
    expect(resolveAuth(parsed, { IDP_SECRET: 'shh' }, problems)).toEqual({
      oidc: {
        issuer: 'https://idp.school.test',
        clientId: 'rostercal',
        clientSecret: 'shh',
        scopes: ['groups'],
        allowedDomains: ['a.test'],
      },
      sensitiveRoles: ['admin', 'staff'],
      auditRetentionDays: 400,
      sessionIdleHours: 8,
      sessionMaxHours: 24,
      helpContact: 'the IT office',
    });
    expect(problems).toEqual([]);
    expect(resolveAuth(parsed, {}, problems).oidc?.clientSecret).toBe('');
    expect(problems).toEqual([
      { path: 'auth.oidc.clientSecret', message: 'environment variable IDP_SECRET is not set' },
    ]);
  });

  it('takes OIDC_CLIENT_SECRET as the secret itself, even when it reads like env:NAME', () => {
    const raw: Record<string, unknown> = {};
    const env = { OIDC_ISSUER: 'https://i.test', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 'env:NOPE' };
    withOidcFromEnv(raw, env);
    const problems: Problem[] = [];
    expect(resolveAuth(authSchema.parse(raw.auth), env, problems).oidc?.clientSecret).toBe('env:NOPE');
    expect(problems).toEqual([]);
    expect(resolveAuth(authSchema.parse({}), env, problems).oidc).toBeNull();
  });
});
