// What a calendar page says after a report or an undo (`?done=…&session=…`, web/absence-done.ts) over HTTP on the
// real app, from what the page itself shows now, never from the URL alone (an outside tester): a reload of
// "Reported" after an undo from another tab, a hand-typed claim, an Undo from a tab left open after the absence was
// undone and reported again (audited, told it was already undone, the newer report standing), and a family page's
// report of a session the child's own link had reported (it can be undone there, not here).
import { describe, expect, it } from 'vitest';
import { BANNER_WORDS, DONE_WORDS } from '../../src/web/absence-done.ts';
import { type HttpAnswer, httpCall } from '../feeds/harness.ts';
import { absenceForm, absenceServer, childWithForm, PUBLIC, postForm } from './absence-page.ts';

const w = absenceServer();

const UNDO = /<form method="post" action="([^"]+\/absences\/undo)">.*?name="absence" value="(\d+)"/s;

/** The page the browser lands on after a post's 303, with the form cookie. */
function follow(location: string, cookie: string): Promise<HttpAnswer> {
  return httpCall(location.replace(PUBLIC, w.server.url), {
    headers: { cookie: `rostercal_form=${cookie}` },
  });
}

/** The status line the page says above or in a session's block, if any. */
function banner(page: HttpAnswer): string | undefined {
  return /<p class="absence-done" role="status">([^<]*)<\/p>/.exec(page.text)?.[1];
}

/** The session's own list item on the page. */
function block(page: HttpAnswer, session: string): string {
  return page.text.split(`id="session-${session}"`)[1]?.split('</li>')[0] ?? '';
}

/** A child no earlier test of the file used (each child's reports count against their own daily limit). */
const used: number[] = [];
async function freshChild() {
  const c = await childWithForm(w.h, w.server.url, used);
  used.push(c.student.id);
  return c;
}

async function undoAudits(absence: string): Promise<string[]> {
  return (await w.h.store.access.listAudit({ action: 'absence-undo', limit: 1000 }))
    .map((a) => a.detail ?? '')
    .filter((d) => d.includes(`absence ${absence}`));
}

describe('"Reported" is said only where the session stands reported', () => {
  it('a reload after an undo from another tab, or a hand-typed claim: no "Reported", the session offered again', async () => {
    const { token, form } = await freshChild();
    const page = `${PUBLIC}/feeds/${token}`;
    const fields = { csrf: form.csrf, session: form.session, student: form.student };
    const made = await postForm(w.server.url, form.action, form.cookie, fields);
    expect(made.status).toBe(303);
    const first = await follow(made.headers.location!, form.cookie);
    expect(banner(first)).toBe(DONE_WORDS.reported);
    const [, undoAt, absence] = UNDO.exec(first.text)!;
    // Another tab undoes it; this one is reloaded.
    const undone = await postForm(w.server.url, undoAt!, form.cookie, { csrf: form.csrf, absence: absence! });
    expect(undone.status).toBe(303);
    const reloaded = await follow(made.headers.location!, form.cookie);
    expect(reloaded.text).not.toContain(DONE_WORDS.reported);
    expect(banner(reloaded)).toBe(BANNER_WORDS['not-reported']);
    expect(block(reloaded, form.session)).toContain('Can\u2019t make it?');

    // Typed by hand, for a session never reported.
    const other = [...first.text.matchAll(/name="session" value="(\d+)"/g)]
      .map((m) => m[1]!)
      .find((s) => s !== form.session)!;
    const typed = await follow(`${page}?done=reported&session=${other}`, form.cookie);
    expect(typed.text).not.toContain(DONE_WORDS.reported);
    // With no session it cannot be checked against anything: nothing is said.
    expect(banner(await follow(`${page}?done=reported`, form.cookie))).toBeUndefined();
  });

  it('"Undone" typed by hand for a session that stands reported: not said', async () => {
    const { token, form } = await freshChild();
    const made = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: form.session,
      student: form.student,
    });
    expect(made.status).toBe(303);
    const typed = await follow(
      `${PUBLIC}/feeds/${token}?done=withdrawn&session=${form.session}`,
      form.cookie,
    );
    expect(typed.text).not.toContain(DONE_WORDS.withdrawn);
    expect(UNDO.test(block(typed, form.session))).toBe(true);
  });
});

describe('an Undo of an absence that no longer stands', () => {
  it('from a tab left open after the absence was undone and reported again: "already undone", the newer report standing, audited', async () => {
    const { token, form } = await freshChild();
    const page = `${PUBLIC}/feeds/${token}`;
    const fields = { csrf: form.csrf, session: form.session, student: form.student };
    const report = async () => {
      const made = await postForm(w.server.url, form.action, form.cookie, fields);
      expect(made.status).toBe(303);
      return UNDO.exec((await follow(made.headers.location!, form.cookie)).text)!;
    };
    // Both tabs show "Reported … Undo" for the first absence.
    const [, undoAt, older] = await report();
    // Tab A undoes it and reports again.
    const undone = await postForm(w.server.url, undoAt!, form.cookie, { csrf: form.csrf, absence: older! });
    expect(undone.status).toBe(303);
    const [, , newer] = await report();
    expect(newer).not.toBe(older);
    const auditedBefore = (await undoAudits(older!)).length;
    // Tab B presses Undo for the first one.
    const stale = await postForm(w.server.url, undoAt!, form.cookie, { csrf: form.csrf, absence: older! });
    expect(stale.status, stale.text).toBe(303);
    expect(stale.headers.location).toBe(
      `${page}?done=already-withdrawn&session=${form.session}#session-${form.session}`,
    );
    const shown = await follow(stale.headers.location!, form.cookie);
    expect(shown.text).not.toContain(DONE_WORDS.withdrawn);
    expect(banner(shown)).toBe(BANNER_WORDS['already-withdrawn-stands']);
    // The newer report stands, with its Undo.
    expect(UNDO.exec(block(shown, form.session))?.[2]).toBe(newer);
    const audits = await undoAudits(older!);
    expect(audits.length).toBe(auditedBefore + 1);
    expect(audits[0]).toMatch(/already withdrawn/);
  });

  it('pressed twice (no newer report): "already undone", audited each time', async () => {
    const { form } = await freshChild();
    const made = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: form.session,
      student: form.student,
    });
    const [, undoAt, absence] = UNDO.exec((await follow(made.headers.location!, form.cookie)).text)!;
    const undo = () => postForm(w.server.url, undoAt!, form.cookie, { csrf: form.csrf, absence: absence! });
    expect((await undo()).headers.location).toContain('?done=withdrawn&');
    const before = (await undoAudits(absence!)).length;
    const again = await undo();
    expect(again.status).toBe(303);
    expect(again.headers.location).toContain('?done=already-withdrawn&');
    expect(banner(await follow(again.headers.location!, form.cookie))).toBe(
      BANNER_WORDS['already-withdrawn'],
    );
    expect((await undoAudits(absence!)).length).toBe(before + 1);
  });
});

describe('a family page’s report of a session the child’s own link reported', () => {
  it('says it was reported from another link and can be undone there, and offers no Undo', async () => {
    const a = await freshChild();
    const b = await freshChild();
    // The child's own link reports it.
    const own = await postForm(w.server.url, a.form.action, a.form.cookie, {
      csrf: a.form.csrf,
      session: a.form.session,
      student: a.form.student,
    });
    expect(own.status).toBe(303);
    const made = await httpCall(`${w.server.url}/family`, {
      form: { from: a.token, links: `${PUBLIC}/feeds/${b.token}` },
    });
    const familyPage = made.headers.location!;
    const form = (await absenceForm(w.server.url, familyPage))!;
    const r = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: a.form.session,
      student: a.form.student,
    });
    expect(r.status, r.text).toBe(303);
    expect(r.headers.location).toContain('?done=reported&');
    const shown = await follow(r.headers.location!, form.cookie);
    expect(shown.text).not.toContain(DONE_WORDS.reported);
    expect(banner(shown)).toBe(BANNER_WORDS['reported-elsewhere']);
    expect(UNDO.test(block(shown, a.form.session))).toBe(false);
  });
});
