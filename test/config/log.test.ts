import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubSecrets } from '../../src/log.ts';

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

  it('masks long feed tokens in paths but keeps a recognisable prefix', () => {
    expect(scrubSecrets('/feeds/AbCdEfGhIjKlMnOpQrStUv.ics')).toBe('/feeds/AbCd….ics');
  });
});
