// The README promises the security headers on every answer. Through the real `rostercal serve`: every method on
// every kind of path (feeds, family links, health, staff, admin, rosters, unknown), the answers routers make by
// themselves (OPTIONS), and the answers Node's HTTP parser makes to a malformed request.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PrivacySchool, privacySchool, type Served, serve, tokenOf } from './served.ts';

let school: PrivacySchool;
let served: Served;
let token: string;
const UNKNOWN = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

beforeAll(async () => {
  school = await privacySchool(41);
  token = tokenOf(school.feeds.find((f) => f.scope === 'team')!.url);
  served = await serve(school);
}, 120_000);
afterAll(async () => {
  await served?.stop();
  await school?.close();
});

/** What every answer carries (PUBLIC_URL is https in these tests, so HSTS too). */
const REQUIRED = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
};

function missing(headers: Record<string, string>): string[] {
  const get = (k: string) => headers[k] ?? null;
  const absent = Object.entries(REQUIRED)
    .filter(([k, v]) => get(k) !== v)
    .map(([k]) => k);
  const csp = get('content-security-policy') ?? '';
  if (!/frame-ancestors 'none'/.test(csp)) absent.push('content-security-policy');
  return absent;
}

/** One request by node:http (fetch refuses TRACE); the status and the headers. */
function send(method: string, path: string): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${served.url}${path}`, { method }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: Object.fromEntries(
            Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]),
          ),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];

describe('every method on every kind of path carries the security headers', () => {
  const paths = () => [
    `/feeds/${token}.ics`,
    `/feeds/${token}`,
    `/feeds/${UNKNOWN}.ics`,
    '/feeds/',
    '/feeds',
    `/family/${UNKNOWN}`,
    '/family',
    '/healthz',
    '/readyz',
    '/metrics',
    '/staff',
    '/admin',
    '/admin/login',
    '/auth/login',
    '/auth/logout',
    '/rosters/teams/1.pdf',
    '/',
    '/no-such-page',
  ];

  it('all methods × all paths', async () => {
    const bad: string[] = [];
    let answers = 0;
    for (const path of paths())
      for (const method of METHODS) {
        const r = await send(method, path);
        answers++;
        const m = missing(r.headers);
        if (m.length) bad.push(`${method} ${path} → ${r.status} lacks ${m.join(', ')}`);
      }
    expect(answers).toBe(paths().length * METHODS.length);
    expect(bad).toEqual([]);
  }, 120_000);

  it('OPTIONS on a feed and on a family link answers with them (the router answers OPTIONS itself)', async () => {
    for (const path of [`/feeds/${token}.ics`, `/feeds/${token}`, `/family/${UNKNOWN}`]) {
      const r = await send('OPTIONS', path);
      expect(missing(r.headers), `OPTIONS ${path} → ${r.status}`).toEqual([]);
    }
  });
});

/** A raw request on its own connection; the answer's status line and headers. */
function raw(request: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const { hostname, port } = new URL(served.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname);
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = ''] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text });
    });
    socket.write(request);
  });
}

describe("the HTTP parser's own answers carry them too", () => {
  it.each([
    ['a malformed request line', 'GET /feeds/x.ics HTTP/1.1 extra\r\nHost: x\r\n\r\n', 400],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n', 400],
    ['headers too large', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
  ])('%s', async (_what, request, status) => {
    const r = await raw(request);
    expect(r.status, r.text).toBe(status);
    expect(missing(r.headers)).toEqual([]);
    expect(r.headers.connection).toBe('close');
  });
});
