import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubSecrets } from '../../src/log.ts';
import { storeErrorText } from '../../src/log-text.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}

describe('logger', () => {
  it('redacts tokens, authorization headers and feed secrets by key', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream, level: 'info' });
    log.info(
      {
        token: 'tok-1111',
        upstream: { url: 'https://x', token: 'tok-2222' },
        req: { headers: { authorization: 'Bearer tok-3333' } },
        school: { upstream: { token: 'tok-4444' } },
        feedToken: 'tok-5555',
        clientSecret: 'tok-6666',
      },
      'hello',
    );
    const out = lines.join('');
    for (const t of ['tok-1111', 'tok-2222', 'tok-3333', 'tok-4444', 'tok-5555', 'tok-6666'])
      expect(out).not.toContain(t);
    expect(out).toContain('[redacted]');
    expect(JSON.parse(out).msg).toBe('hello');
  });

  it('scrubs bearer tokens and token query values from messages and errors', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    log.warn('calling with Bearer abc.def-ghi and https://x/y?token=zzz999&a=1');
    log.error({ err: new Error('failed: Authorization: Bearer qwerty12345') }, 'boom');
    const out = lines.join('');
    expect(out).not.toContain('abc.def-ghi');
    expect(out).not.toContain('zzz999');
    expect(out).not.toContain('qwerty12345');
    expect(out).toContain('a=1');
  });

  it('an err that is a string or a plain object is written as given, scrubbed, not spread into characters', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    log.error({ err: 'disk full: Bearer qwerty12345' }, 'one');
    log.error({ err: { code: 'E1', detail: 'Bearer zzz777' } }, 'two');
    const [one, two] = lines.map((l) => JSON.parse(l));
    expect(one.err).toBe('disk full: Bearer [redacted]');
    expect(two.err).toEqual({ code: 'E1', detail: 'Bearer [redacted]' });
  });

  it('masks long feed tokens in paths but keeps a recognisable prefix', () => {
    expect(scrubSecrets('/feeds/AbCdEfGhIjKlMnOpQrStUv.ics')).toBe('/feeds/AbCd….ics');
  });
});

// Each form below once reached a log line or a stored error unmasked.
const PEM_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7bXJ1c2xvZ2tleQ';
const PRIVATE_KEY = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\nZmFrZWJvZHlmb3J0ZXN0c29ubHk=\n-----END PRIVATE KEY-----\n`;
const CLIENT_SECRET = 'Qx8Q~clientSecretValue.Abc-123';
const REFRESH_TOKEN = '1//0gLx2sRefreshTokenValue-AbCdEfGhIjKlMnOp_qRsTuVwXyZ';
const FAMILY_TOKEN = 'Fz9qY2xL0mWc7VbN4rTsEe1uIoPa3dKh';
const LEAKS = [PEM_BODY, 'ZmFrZWJvZHlmb3J0ZXN0c29ubHk', CLIENT_SECRET, REFRESH_TOKEN.slice(3), FAMILY_TOKEN];

describe('secret forms in free text', () => {
  const forms: [string, string][] = [
    ['a private key (PEM, real newlines)', `key file: ${PRIVATE_KEY} end`],
    ['a private key in JSON (escaped newlines)', JSON.stringify({ private_key: PRIVATE_KEY })],
    ['a private key cut short (no END line)', `"-----BEGIN RSA PRIVATE KEY-----\\n${PEM_BODY}`],
    ['a key body without its header', `..."KEY-----\\n${PEM_BODY}"...`],
    ['a JSON "clientSecret"', `{"tenantId":"t","clientSecret":"${CLIENT_SECRET}","clientId":"c"}`],
    [
      'a JSON "clientSecret" inside a JSON string',
      JSON.stringify({ body: `{"clientSecret": "${CLIENT_SECRET}"}` }),
    ],
    ['clientSecret= in text', `clientSecret=${CLIENT_SECRET}&grant_type=client_credentials`],
    ['a Google refresh token', `refresh with ${REFRESH_TOKEN} failed`],
    ['a Google refresh token, URL-encoded', `refresh_token=${encodeURIComponent(REFRESH_TOKEN)}`],
    ['a family link path', `GET https://cal.example.org/family/${FAMILY_TOKEN} failed`],
    ['a family link path with a suffix', `/family/${FAMILY_TOKEN}.ics`],
  ];

  it.each(forms)('%s is masked by scrubSecrets', (_what, text) => {
    const out = scrubSecrets(text);
    for (const leak of LEAKS) expect(out).not.toContain(leak);
    expect(out).not.toBe(text);
  });

  it.each(forms)(
    '%s is masked in every part of a log line (message, error, any field at any depth)',
    (_what, text) => {
      const { lines, stream } = capture();
      const log = createLogger({ destination: stream, level: 'info' });
      log.warn(text);
      log.error({ err: new Error(`provider said: ${text}`) }, 'push failed');
      log.info({ response: { data: { error: { detail: text } } }, note: text }, 'answer');
      log.info(
        {
          err: Object.assign(new Error('x'), {
            config: { headers: { Authorization: 'Bearer tok-7777' } },
            body: text,
          }),
        },
        'y',
      );
      const out = lines.join('');
      expect(lines).toHaveLength(4);
      for (const leak of [...LEAKS, 'tok-7777']) expect(out).not.toContain(leak);
    },
  );

  it('keeps ordinary words: a message about a token or a secret is still readable', () => {
    expect(scrubSecrets('the upstream rejected the token: 401 Unauthorized')).toBe(
      'the upstream rejected the token: 401 Unauthorized',
    );
    expect(scrubSecrets('GET /feeds/abcdef… 404')).toBe('GET /feeds/abcdef… 404');
    expect(scrubSecrets('-----BEGIN CERTIFICATE-----')).toBe('-----BEGIN CERTIFICATE-----');
  });

  it('a setting named in prose is not followed by its value: the next word stays, a value after it goes', () => {
    const prose =
      'no feed rotation record vouches for FEED_SECRET: neither the database nor the file holds one';
    expect(scrubSecrets(prose)).toBe(prose);
    expect(scrubSecrets('FEED_SECRET: must be at least 32 characters')).toBe(
      'FEED_SECRET: must be at least 32 characters',
    );
    expect(scrubSecrets('use a bearer token or basic auth')).toBe('use a bearer token or basic auth');
    // Values still go, whatever their form.
    expect(scrubSecrets('FEED_SECRET: Zq81vV0pLs4mXk2B9wEr7tYu')).toBe('FEED_SECRET: [redacted]');
    expect(scrubSecrets('client_secret=neither&x=1')).toBe('client_secret=[redacted]&x=1');
    expect(scrubSecrets('{"feed_secret": "neither"}')).toBe('{"feed_secret": "[redacted]"}');
    expect(scrubSecrets('password:hunter')).toBe('password:[redacted]');
  });

  it('a credential after Bearer is marked in place, a placeholder too, and the text around it stays whole', () => {
    expect(scrubSecrets('a valid API token is required (Authorization: Bearer <token>)')).toBe(
      'a valid API token is required (Authorization: Bearer [redacted])',
    );
    expect(scrubSecrets('sent Authorization: Bearer abc.DEF-123 then')).toBe(
      'sent Authorization: Bearer [redacted] then',
    );
  });
});

describe('log lines reach terminals', () => {
  it('C1 controls, bidi overrides and line separators in any field are escaped: the line is the same JSON', () => {
    const { lines, stream } = capture();
    const log = createLogger({ destination: stream });
    const name = 'Open Netball\r\n\u001b[2J\u009b31m\u0085\u202Eevil\u2066\u2028';
    log.warn({ team: { name } }, `pull of ${name}`);
    const out = lines.join('');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point.
    expect(out.trimEnd()).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/);
    const parsed = JSON.parse(out) as { team: { name: string }; msg: string };
    expect(parsed.team.name).toBe(name);
    expect(parsed.msg).toBe(`pull of ${name}`);
  });
});

describe('store errors as /readyz and the serve banner say them', () => {
  it('cuts a connection string out (its password with it), scrubs secrets and shortens', () => {
    const err = new Error(
      'connect ECONNREFUSED for postgres://rostercal:hunter2@db.internal:5432/rc while reading /feeds/AAAAAAAAAAAAAAAAAAAAAAAA',
    );
    const text = storeErrorText(err);
    expect(text).toBe('connect ECONNREFUSED for <url> while reading /feeds/AAAA…');
    expect(text).not.toContain('hunter2');
    expect(storeErrorText('x'.repeat(1_000))).toHaveLength(300);
    expect(storeErrorText(new Error('database disk image is malformed'))).toBe(
      'database disk image is malformed',
    );
  });
});
