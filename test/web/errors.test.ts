// What the app answers when a request goes wrong (web/errors.ts), over HTTP on the whole app and a real SQLite store
// a pull from the sandbox filled: a client's mistake is a 4xx in its path's layout (a page for a browser, a line
// for anything else), never a 500; and what may be logged of a path keeps no token. (Through `rostercal serve`,
// with its log read: test/privacy/client-errors.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorStatus, redactPath } from '../../src/web/errors.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';

let h: Harness;
let server: RunningServer;
let token: string;

beforeAll(async () => {
  h = await startHarness({ seed: 24 });
  server = await h.serve();
  token = (await h.tokens.ensure('hill', 'team', h.sandbox.school.teams[0]!.id)).token!;
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('redactPath and clientErrorStatus', () => {
  it('keeps 6 characters of every token-long segment, in any route, and drops the query', () => {
    expect(redactPath(`/feeds/${token}.ics?reminder=1h`)).toBe(`/feeds/${token.slice(0, 6)}…`);
    expect(redactPath(`/family/${token}/events/12.ics`)).toBe(`/family/${token.slice(0, 6)}…/events/12.ics`);
    expect(redactPath('/admin/audit')).toBe('/admin/audit');
  });

  it('a URIError is 400, a 4xx error keeps its status, anything else is not the client’s', () => {
    expect(clientErrorStatus(new URIError('bad escape'))).toBe(400);
    expect(clientErrorStatus(Object.assign(new Error('too large'), { status: 413 }))).toBe(413);
    expect(clientErrorStatus(Object.assign(new Error('x'), { statusCode: 415 }))).toBe(415);
    expect(clientErrorStatus(Object.assign(new Error('boom'), { status: 500 }))).toBeNull();
    expect(clientErrorStatus(new Error('boom'))).toBeNull();
  });
});

describe("a client's mistake over HTTP", () => {
  it('a malformed escape after a token: 400, a page for a browser, a line for a calendar app, no token in it', async () => {
    const path = `/feeds/${token}%E0%A4.ics`;
    const page = await fetch(`${server.url}${path}`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).not.toContain(token);
    const text = await fetch(`${server.url}${path}`, { headers: { accept: 'text/calendar' } });
    expect(text.status).toBe(400);
    expect(await text.text()).toBe('Bad request\n');
  });

  it('a POST that is not a form: 415 before any route reads it', async () => {
    const res = await fetch(`${server.url}/family`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: token }),
    });
    expect(res.status).toBe(415);
    expect(await res.text()).toContain('Unsupported request body');
  });

  it('an unknown staff path is a 404 in the staff layout, not the parents’ notice', async () => {
    const res = await fetch(`${server.url}/staff/nothing-here`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(404);
    const page = await res.text();
    expect(page).not.toContain('This calendar link does not work');
    const parents = await fetch(`${server.url}/feeds/nothing-here`, { headers: { accept: 'text/html' } });
    expect(parents.status).toBe(404);
    expect(await parents.text()).toContain('This calendar link does not work');
  });
});
