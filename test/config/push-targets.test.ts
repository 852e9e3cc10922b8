import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseTargets } from '../../src/config/push-targets.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'rostercal-push-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const google = { provider: 'google', google: { auth: { accessToken: 'ya29.token' } } };
const outlook = {
  provider: 'outlook',
  outlook: { tenantId: 't', clientId: 'c', clientSecret: 'env:GRAPH_SECRET' },
};

function problem(raw: unknown, env: NodeJS.ProcessEnv = {}): string {
  try {
    parseTargets(raw, 'schools[0].targets', env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('push targets configuration', () => {
  it('fills defaults: audience from scope, window, calendar name, Graph and Google endpoints', () => {
    const [g, o] = parseTargets(
      [
        { id: 'teams', scope: 'team', ...google },
        { id: 'staff', scope: 'staff', ...outlook },
      ],
      'schools[0].targets',
      { GRAPH_SECRET: 's3cret' },
    );
    expect(g).toMatchObject({
      provider: 'google',
      audience: 'guardian',
      ids: null,
      window: { daysBack: 14, daysAhead: 365 },
    });
    if (g?.provider !== 'google') throw new Error('google expected');
    expect(g.google.rootUrl).toBe('https://www.googleapis.com/');
    expect(g.google.auth).toEqual({ kind: 'token', accessToken: 'ya29.token' });
    expect(o).toMatchObject({ provider: 'outlook', audience: 'staff' });
    if (o?.provider !== 'outlook') throw new Error('outlook expected');
    expect(o.outlook).toMatchObject({
      baseUrl: 'https://graph.microsoft.com',
      calendarName: 'School activities',
      batchSize: 20,
      maxConcurrentPerMailbox: 4,
      auth: { kind: 'clientSecret', tenantId: 't', clientId: 'c', clientSecret: 's3cret' },
    });
  });

  it('reads a service-account key file and takes its token_uri unless overridden', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const file = join(dir, 'sa.json');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeFileSync(
      file,
      JSON.stringify({
        type: 'service_account',
        client_email: 'sa@x.iam.gserviceaccount.com',
        private_key: pem,
        token_uri: 'https://proxy.example/token',
      }),
    );
    const [t] = parseTargets(
      [
        {
          id: 'coaches',
          scope: 'staff',
          provider: 'google',
          google: { auth: { keyFile: file }, calendars: { mode: 'primary' } },
        },
      ],
      'targets',
    );
    if (t?.provider !== 'google' || t.google.auth.kind !== 'serviceAccount')
      throw new Error('service account expected');
    expect(t.google.auth.key).toMatchObject({
      clientEmail: 'sa@x.iam.gserviceaccount.com',
      tokenUri: 'https://proxy.example/token',
    });
  });

  it('names the failing field', () => {
    expect(problem([{ id: 'a', scope: 'team', provider: 'yahoo' }])).toMatch(
      /schools\[0\]\.targets\[0\]\.provider: must be "google" or "outlook"/,
    );
    expect(problem([{ id: 'a', scope: 'team', provider: 'google' }])).toMatch(
      /schools\[0\]\.targets\[0\]\.google: is required/,
    );
    expect(problem([{ id: 'a', scope: 'team', ...outlook }], { GRAPH_SECRET: 'x' })).toMatch(
      /schools\[0\]\.targets\[0\]\.scope: outlook targets push into mailboxes/,
    );
    expect(
      problem([{ id: 'a', scope: 'staff', provider: 'outlook', outlook: { tenantId: 't', clientId: 'c' } }]),
    ).toMatch(/schools\[0\]\.targets\[0\]\.outlook\.clientSecret: is required \(or give accessToken\)/);
    expect(problem([{ id: 'a', scope: 'staff', ...outlook }])).toMatch(
      /schools\[0\]\.targets\[0\]\.outlook\.clientSecret: environment variable GRAPH_SECRET is not set/,
    );
    expect(
      problem([
        {
          id: 'a',
          scope: 'team',
          provider: 'google',
          google: { auth: { keyFile: join(dir, 'missing.json') } },
        },
      ]),
    ).toMatch(/schools\[0\]\.targets\[0\]\.google\.auth\.keyFile: cannot read .*ENOENT/);
    expect(problem([{ id: 'a', scope: 'team', provider: 'google', google: { auth: {} } }])).toMatch(
      /targets\[0\]\.google\.auth: give exactly one of accessToken, keyFile or key/,
    );
    expect(
      problem([
        { id: 'a', scope: 'staff', ...google, google: { ...google.google, calendars: { mode: 'primary' } } },
      ]),
    ).toMatch(/targets\[0\]\.google\.auth: calendars\.mode "primary" acts as each staff member/);
    expect(problem([{ id: 'a', scope: 'team', ...google, colour: 'red' }])).toMatch(
      /targets\[0\]\.colour: unknown field/,
    );
    expect(
      problem([
        { id: 'a', scope: 'team', ...google },
        { id: 'a', scope: 'staff', ...google },
      ]),
    ).toMatch(/targets\[1\]\.id: "a" is used twice/);
    expect(
      problem([{ id: 'a', scope: 'team', ...google, google: { ...google.google, rootUrl: 'ftp://x' } }]),
    ).toMatch(/targets\[0\]\.google\.rootUrl: is not an http\(s\) URL/);
  });

  it('never repeats a secret in a message', () => {
    const msg = problem([
      {
        id: 'a',
        scope: 'staff',
        provider: 'outlook',
        outlook: { clientSecret: 'super-secret-value', accessToken: 'tok-secret', batchSize: 50 },
      },
    ]);
    expect(msg).toMatch(/batchSize/);
    expect(msg).not.toMatch(/super-secret-value|tok-secret/);
  });

  it('stops loadConfig at start-up on a bad target', async () => {
    const file = join(dir, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        schools: [
          {
            id: 'hill',
            name: 'Hill',
            upstream: { url: 'http://127.0.0.1:1/', token: 't' },
            timeZone: 'Europe/London',
            targets: [
              {
                id: 'x',
                scope: 'staff',
                provider: 'outlook',
                outlook: { accessToken: 't', maxConcurrentPerMailbox: 9 },
              },
            ],
          },
        ],
      }),
    );
    await expect(loadConfig({ ROSTERCAL_CONFIG: file })).rejects.toThrow(
      /schools\[0\]\.targets\[0\]\.outlook\.maxConcurrentPerMailbox/,
    );
  });
});
