// The `auth` settings reach the typed Config once, through loadConfig: `auth.oidc` from the file (its secret
// possibly `env:NAME`), OIDC_ISSUER / OIDC_CLIENT_ID / OIDC_CLIENT_SECRET from the environment (all three or an
// error naming the missing one), issuers https (plain http on loopback only), defaults for sensitive sheets and
// audit retention; a wrong field is named at start-up. And the ADMIN_TOKEN: shorter than 32 characters, refused.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config, ConfigError, describeConfig, loadConfig } from '../../src/config.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-auth-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const school = {
  id: 'north',
  name: 'North High',
  upstream: { url: 'https://api.example.org/v1', token: 'upstream-token' },
  timeZone: 'Europe/London',
};

let n = 0;
async function fromFile(content: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<Config> {
  const file = path.join(dir, `config-${n++}.json`);
  await writeFile(file, JSON.stringify({ schools: [school], ...content }));
  return loadConfig({ ROSTERCAL_CONFIG: file, ...env });
}

async function errorOf(load: Promise<unknown>): Promise<string> {
  try {
    await load;
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

const ONE_SCHOOL_ENV = {
  UPSTREAM_URL: 'https://api.example.org/v1',
  UPSTREAM_TOKEN: 'upstream-token',
  SCHOOL_TZ: 'Europe/London',
  SCHOOL_NAME: 'Hill School',
};

describe('auth settings', () => {
  it('defaults: no identity provider, medical sheets for admins and assigned staff, audit kept 400 days', async () => {
    const cfg = await fromFile({});
    expect(cfg.auth).toEqual({
      oidc: null,
      sensitiveRoles: ['admin', 'assigned'],
      auditRetentionDays: 400,
      sessionIdleHours: 8,
      sessionMaxHours: 24,
      helpContact: null,
    });
    expect((await loadConfig({})).auth.oidc).toBeNull();
  });

  it('auth.oidc from the file: the secret from env:NAME, domains lower-cased, extra scopes kept', async () => {
    const cfg = await fromFile(
      {
        auth: {
          oidc: {
            issuer: 'https://accounts.google.com',
            clientId: 'client-1.apps.googleusercontent.com',
            clientSecret: 'env:GOOGLE_SECRET',
            allowedDomains: ['@North.example.ORG'],
            scopes: ['openid', 'groups'],
          },
          sensitiveRoles: ['admin', 'manager'],
          auditRetentionDays: 30,
          helpContact: 'the IT office, it@north.example.org',
        },
      },
      { GOOGLE_SECRET: 'the-google-secret' },
    );
    expect(cfg.auth).toMatchObject({
      oidc: {
        issuer: 'https://accounts.google.com',
        clientId: 'client-1.apps.googleusercontent.com',
        clientSecret: 'the-google-secret',
        allowedDomains: ['north.example.org'],
        scopes: ['groups'],
      },
      sensitiveRoles: ['admin', 'manager'],
      auditRetentionDays: 30,
      helpContact: 'the IT office, it@north.example.org',
    });
    expect(JSON.stringify(describeConfig(cfg))).not.toContain('the-google-secret');
  });

  it('OIDC_* from the environment, alone or over the file (whose allowedDomains stay)', async () => {
    const env = {
      OIDC_ISSUER: 'https://login.microsoftonline.com/tenant-id/v2.0',
      OIDC_CLIENT_ID: 'entra-app-id',
      OIDC_CLIENT_SECRET: 'entra-secret',
    };
    const alone = await loadConfig({ ...ONE_SCHOOL_ENV, ...env });
    expect(alone.auth.oidc).toEqual({
      issuer: env.OIDC_ISSUER,
      clientId: 'entra-app-id',
      clientSecret: 'entra-secret',
      allowedDomains: [],
      scopes: [],
    });
    const over = await fromFile(
      {
        auth: {
          oidc: {
            issuer: 'https://accounts.google.com',
            clientId: 'x',
            clientSecret: 'env:UNSET',
            allowedDomains: ['north.example.org'],
          },
        },
      },
      env,
    );
    expect(over.auth.oidc).toMatchObject({
      issuer: env.OIDC_ISSUER,
      clientId: 'entra-app-id',
      clientSecret: 'entra-secret',
    });
    expect(over.auth.oidc?.allowedDomains).toEqual(['north.example.org']);
  });

  it('a partial OIDC_* set names each missing variable', async () => {
    const message = await errorOf(
      loadConfig({ ...ONE_SCHOOL_ENV, OIDC_ISSUER: 'https://accounts.google.com', OIDC_CLIENT_ID: 'id' }),
    );
    expect(message).toMatch(
      /^config: OIDC_CLIENT_SECRET: is not set, but OIDC_ISSUER and OIDC_CLIENT_ID are/,
    );
    expect(message).not.toMatch(/OIDC_ISSUER:|OIDC_CLIENT_ID:/);
    const two = await errorOf(loadConfig({ OIDC_CLIENT_SECRET: 's3cret-value' }));
    expect(two).toMatch(/config: OIDC_ISSUER: is not set/);
    expect(two).toMatch(/config: OIDC_CLIENT_ID: is not set/);
    expect(two).not.toContain('s3cret-value');
  });

  it('issuers are https; plain http only on loopback; errors name the field or the variable', async () => {
    const lan = await errorOf(
      fromFile({ auth: { oidc: { issuer: 'http://idp.school.lan/', clientId: 'c', clientSecret: 's' } } }),
    );
    expect(lan).toMatch(/config: auth\.oidc\.issuer: must be an https URL: plain http only on loopback/);
    for (const ok of ['http://127.0.0.1:9000/idp', 'http://localhost:8080/x', 'http://[::1]:5556/'])
      expect(
        (await fromFile({ auth: { oidc: { issuer: ok, clientId: 'c', clientSecret: 's' } } })).auth.oidc
          ?.issuer,
      ).toBe(ok);
    const byEnv = await errorOf(
      loadConfig({
        ...ONE_SCHOOL_ENV,
        OIDC_ISSUER: 'http://idp.school.lan',
        OIDC_CLIENT_ID: 'c',
        OIDC_CLIENT_SECRET: 's',
      }),
    );
    expect(byEnv).toMatch(/config: OIDC_ISSUER: must be an https URL/);
    expect(
      await errorOf(loadConfig({ OIDC_ISSUER: 'not a url', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's' })),
    ).toMatch(/config: OIDC_ISSUER: is not a URL/);
  });

  it('names every other wrong field', async () => {
    const message = await errorOf(
      fromFile({
        auth: {
          oidc: {
            issuer: 'https://accounts.google.com',
            clientId: '',
            clientSecret: 'env:MISSING_SECRET',
            allowedDomains: ['not a domain'],
            scopes: ['two words'],
            tenant: 'x',
          },
          sensitiveRoles: ['everyone'],
          auditRetentionDays: 0,
        },
      }),
    );
    for (const field of [
      'auth.oidc.clientId',
      'auth.oidc.allowedDomains[0]',
      'auth.oidc.scopes[0]',
      'auth.oidc.tenant',
      'auth.sensitiveRoles[0]',
      'auth.auditRetentionDays',
    ])
      expect(message).toContain(`config: ${field}`);
    const secret = await errorOf(
      fromFile({
        auth: {
          oidc: { issuer: 'https://accounts.google.com', clientId: 'c', clientSecret: 'env:MISSING_SECRET' },
        },
      }),
    );
    expect(secret).toMatch(
      /config: auth\.oidc\.clientSecret: environment variable MISSING_SECRET is not set/,
    );
    expect(await errorOf(fromFile({ auth: { sessionIdleHours: 30 } }))).toMatch(
      /config: auth\.sessionIdleHours: must not exceed sessionMaxHours \(24\)/,
    );
  });
});

describe('ADMIN_TOKEN', () => {
  it('shorter than 32 characters is refused without echoing it; 32 or more is taken', async () => {
    const message = await errorOf(loadConfig({ ...ONE_SCHOOL_ENV, ADMIN_TOKEN: 'short-tok1' }));
    expect(message).toMatch(/^config: ADMIN_TOKEN: is 10 characters long; .* at least 32/);
    expect(message).not.toContain('short-tok1');
    const token = 'a'.repeat(32);
    expect((await loadConfig({ ...ONE_SCHOOL_ENV, ADMIN_TOKEN: token })).adminToken).toBe(token);
  });
});
