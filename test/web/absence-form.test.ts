// The "Can't make it?" form's CSRF protection (web/absence-form.ts) over HTTP, on the real app with families'
// "Can't make it?" on and the sandbox's school pulled into a real SQLite store: a calendar page sets a random form
// cookie (HttpOnly, SameSite=Strict, Secure on an https service) that its form repeats, and keeps a browser's own;
// a post without the cookie, with another value, or that the browser says came from another site or origin is
// refused (403, audited without the sender's words, nothing reported); the service's own origin, `Origin: null`
// (its no-referrer pages) and same-origin pass. The page says what was just done in the words of DONE_WORDS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DONE_WORDS } from '../../src/web/absence-done.ts';
import type { RunningServer } from '../../src/web/server.ts';
import { familyAbsences, type Harness, httpCall, startHarness } from '../feeds/harness.ts';
import {
  type AbsenceForm,
  absenceForm,
  childWithForm,
  formCookieSet,
  PUBLIC,
  postForm,
} from './absence-page.ts';

let h: Harness;
let server: RunningServer;
let plainHttp: RunningServer;
let token: string;
let form: AbsenceForm;

beforeAll(async () => {
  h = await startHarness({ seed: 32 });
  const absences = familyAbsences(h);
  server = await h.serve({ publicUrl: PUBLIC, absences });
  plainHttp = await h.serve({ publicUrl: 'http://cal.example.org', absences });
  ({ token, form } = await childWithForm(h, server.url));
}, 120_000);
afterAll(() => h?.close());

const refusals = async () =>
  (await h.store.access.listAudit({ action: 'absence-refused', limit: 1000 })).length;
const reports = async () =>
  (await h.store.access.listAudit({ action: 'absence-report', limit: 1000 })).length;

describe('the form cookie', () => {
  it('a page sets a random one the form repeats (Secure on https), keeps a browser’s own, replaces a malformed one', async () => {
    const set = formCookieSet(form.page);
    expect(set).toMatch(/^rostercal_form=[A-Za-z0-9_-]{32}; Path=\/; HttpOnly; SameSite=Strict; Secure$/);
    expect(form.csrf).toBe(form.cookie);
    const other = (await absenceForm(server.url, `${PUBLIC}/feeds/${token}`))!;
    expect(other.cookie).not.toBe(form.cookie);
    const again = (await absenceForm(server.url, `${PUBLIC}/feeds/${token}`, form.cookie))!;
    expect(formCookieSet(again.page)).toBeUndefined();
    expect(again.csrf).toBe(form.cookie);
    const bad = (await absenceForm(server.url, `${PUBLIC}/feeds/${token}`, 'not-a-value;x'))!;
    expect(formCookieSet(bad.page)).toMatch(/^rostercal_form=[A-Za-z0-9_-]{32};/);
    expect(bad.csrf).not.toBe('not-a-value');
    const http = (await absenceForm(plainHttp.url, `${PUBLIC}/feeds/${token}`))!;
    expect(formCookieSet(http.page)).toMatch(/; SameSite=Strict$/);
  });
});

describe('a posted form', () => {
  it('without the cookie, with another value, or from another site or origin: 403, audited, nothing reported', async () => {
    const [refusedBefore, reportsBefore] = [await refusals(), await reports()];
    const fields = { csrf: form.csrf, session: form.session, student: form.student };
    const tries: [string, string | null, Record<string, string>, Record<string, string>][] = [
      ['no cookie', null, fields, {}],
      ['another value', form.cookie, { ...fields, csrf: 'B'.repeat(32) }, {}],
      ['a shorter value', form.cookie, { ...fields, csrf: form.csrf.slice(1) }, {}],
      ['no value', form.cookie, { session: form.session, student: form.student }, {}],
      ['cross-site', form.cookie, fields, { 'Sec-Fetch-Site': 'cross-site' }],
      ['same-site', form.cookie, fields, { 'Sec-Fetch-Site': 'same-site <b>x</b>' }],
      ['another origin', form.cookie, fields, { Origin: 'https://evil.example' }],
      ['a port of ours', form.cookie, fields, { Origin: 'https://cal.example.org:8443' }],
    ];
    for (const [why, cookie, body, headers] of tries) {
      const r = await postForm(server.url, form.action, cookie, body, headers);
      expect(r.status, why).toBe(403);
      expect(r.text, why).toContain('This form has expired or did not come from the calendar page.');
    }
    expect((await refusals()) - refusedBefore).toBe(tries.length);
    const [last] = await h.store.access.listAudit({ action: 'absence-refused', limit: 10 });
    expect(last!.detail).not.toContain('<b>');
    expect(await reports()).toBe(reportsBefore);
  });

  it('from the service’s own origin, Origin: null (its no-referrer pages) or same-origin: it is acted on', async () => {
    const fields = { csrf: form.csrf, session: form.session, student: form.student };
    const made = await postForm(server.url, form.action, form.cookie, fields, {
      Origin: PUBLIC,
      'Sec-Fetch-Site': 'same-origin',
    });
    expect(made.status).toBe(303);
    const shown = await httpCall(made.headers.location!.replace(PUBLIC, server.url), {
      headers: { cookie: `rostercal_form=${form.cookie}` },
    });
    expect(shown.text).toContain(`<p class="absence-done" role="status">${DONE_WORDS.reported}</p>`);
    const absence = /name="absence" value="(\d+)"/.exec(shown.text)![1]!;
    const undone = await postForm(
      server.url,
      `${form.action}/undo`,
      form.cookie,
      { csrf: form.csrf, absence },
      { Origin: 'null', 'Sec-Fetch-Site': 'none' },
    );
    expect(undone.status).toBe(303);
    expect(undone.headers.location).toContain('?done=withdrawn');
  });
});
