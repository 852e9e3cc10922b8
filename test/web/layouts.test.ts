// The layouts (web/layouts.ts) as a browser receives them over HTTP from an Express app: every page with a language,
// a title, one main landmark and its h1; each audience's CSP, allowing by hash only the stylesheet the page carries;
// never cached; text from upstream or a provider escaped, never markup; JSON whose controls cannot act on a terminal.
import { createHash } from 'node:crypto';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { html } from '../../src/util/html.ts';
import {
  NOTICE_CSP,
  parentLayout,
  sendAdminPage,
  sendJson,
  sendNotice,
  sendPage,
  sendProblem,
  staffPageText,
} from '../../src/web/layouts.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';

const HOSTILE = '<script>alert(1)</script>\u202E\u001b[2J';
let server: RunningServer;

beforeAll(async () => {
  const app = express();
  app.get('/notice', (_req, res) => sendNotice(res, 404, 'Not found', html`<h1>Gone: ${HOSTILE}</h1>`));
  app.get('/staff', (_req, res) =>
    sendPage(res, {
      title: `Team ${HOSTILE}`,
      body: html`<h1>My teams</h1>`,
      who: { label: `coach ${HOSTILE}`, csrf: 'csrf-value-1' },
    }),
  );
  app.get('/admin', (_req, res) =>
    sendAdminPage(res, { title: 'Audit', body: html`<h1>Audit</h1>`, wide: true }),
  );
  app.get('/problem', (_req, res) =>
    sendProblem(res, 403, 'Not yours', ['Ask the office.', HOSTILE], { href: '/staff', label: 'My teams' }),
  );
  app.get('/json', (_req, res) => sendJson(res, JSON.stringify({ title: HOSTILE })));
  server = await startServer(app, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await server?.close(500);
});

async function page(path: string) {
  const res = await fetch(`${server.url}${path}`);
  return { res, text: await res.text() };
}

/** Every page a person opens: a language, a title, one main landmark and one h1. */
function expectLandmarks(text: string) {
  expect(text).toMatch(/^<!doctype html>\n?<html lang="en">/);
  expect(text.match(/<title>[^<]+<\/title>/g)).toHaveLength(1);
  expect(text.match(/<main[ >]/g)).toHaveLength(1);
  expect(text.match(/<h1>/g)).toHaveLength(1);
}

/** The page's stylesheets are the ones its CSP allows by hash. */
function expectStylesAllowed(text: string, csp: string) {
  const styles = [...text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  expect(styles.length).toBeGreaterThan(0);
  for (const s of styles)
    expect(csp).toContain(`'sha256-${createHash('sha256').update(s).digest('base64')}'`);
}

describe('the parents’ notice', () => {
  it('its status, the notice CSP (no script, no form), never cached, text escaped', async () => {
    const { res, text } = await page('/notice');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-security-policy')).toBe(NOTICE_CSP);
    expect(NOTICE_CSP).toContain("form-action 'none'");
    expect(NOTICE_CSP).not.toContain('script-src');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectLandmarks(text);
    expectStylesAllowed(text, NOTICE_CSP);
    expect(text).not.toContain('<script>alert(1)');
    expect(text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('a calendar page carries its script; a notice none', () => {
    const landing = parentLayout({ title: 'Team', body: html`<h1>Team</h1>`, landing: { absences: false } });
    expect(landing).toMatch(/<script>[\s\S]+<\/script>/);
    expect(parentLayout({ title: 'x', body: html`<h1>x</h1>` })).not.toContain('<script>');
  });
});

describe('staff and admin pages', () => {
  it('a staff page: its title, who is signed in and a sign-out form with the CSRF value, all text escaped', async () => {
    const { res, text } = await page('/staff');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expectLandmarks(text);
    expectStylesAllowed(text, csp);
    expect(text).toContain('<form class="inline" method="post" action="/auth/logout">');
    expect(text).toContain('name="csrf" value="csrf-value-1"');
    expect(text).not.toContain('<script>alert(1)');
    expect(text).toMatch(/<title>Team &lt;script&gt;.* · rostercal<\/title>/);
  });

  it("an admin page has the admins' navigation and room for wide tables", async () => {
    const { text } = await page('/admin');
    expectLandmarks(text);
    expect(text).toContain('<a href="/admin/audit">Audit</a>');
    expect(text).toContain('<main class="wide">');
    expect((await page('/staff')).text).not.toContain('<a href="/admin">');
  });

  it('a problem page: its status, a card that says why, escaped, and the way on', async () => {
    const { res, text } = await page('/problem');
    expect(res.status).toBe(403);
    expectLandmarks(text);
    expect(text).toContain('<div class="card" role="alert"><h1>Not yours</h1><p>Ask the office.</p>');
    expect(text).toContain('<a class="btn primary" href="/staff">My teams</a>');
    expect(text).not.toContain('<script>alert(1)');
  });

  it('a form may lead to another origin only when named as an origin', () => {
    const ok = staffPageText({ title: 'x', body: html`<h1>x</h1>`, formTargets: ['http://127.0.0.1:4000'] });
    expect(ok.csp).toContain("form-action 'self' http://127.0.0.1:4000;");
    expect(() =>
      staffPageText({ title: 'x', body: html`<h1>x</h1>`, formTargets: ['http://127.0.0.1:4000/cb'] }),
    ).toThrow('a form target must be an origin');
  });
});

describe('sendJson', () => {
  it('the same value, with the controls and bidi overrides escaped', async () => {
    const { res, text } = await page('/json');
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(text.includes('\u202E') || text.includes('\u001b')).toBe(false);
    expect(JSON.parse(text)).toEqual({ title: HOSTILE });
  });
});
