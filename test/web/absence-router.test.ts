// POST <page>/absences and <page>/absences/undo (web/absence-router.ts) over HTTP, on the real app with families'
// "Can't make it?" on, the sandbox's school pulled into a real SQLite store and reports written to the sandbox: a
// report from a child's page or a family page goes back to that page at the session (303, never cached), which then
// shows it with its undo; ids that are not ids are a 400 page; a team's page reports nothing (403); an unknown link
// gets the feed's own 404.
import { describe, expect, it } from 'vitest';
import { DONE_WORDS } from '../../src/web/absence-done.ts';
import { httpCall } from '../feeds/harness.ts';
import { absenceForm, absenceServer, childWithForm, PUBLIC, postForm } from './absence-page.ts';

const w = absenceServer();

const UNDO = /<form method="post" action="([^"]+\/absences\/undo)">.*?name="absence" value="(\d+)"/s;

describe('reporting and undoing', () => {
  it('from a child’s page: 303 back to the page at the session, which shows the report and its undo; undone, 303 again', async () => {
    const { token, form } = await childWithForm(w.h, w.server.url);
    const page = `${PUBLIC}/feeds/${token}`;
    const made = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: form.session,
      student: form.student,
      reason: 'Dentist',
    });
    expect(made.status).toBe(303);
    expect(made.headers['cache-control']).toBe('no-store');
    expect(made.headers.location).toBe(
      `${page}?done=reported&session=${form.session}#session-${form.session}`,
    );
    const shown = await httpCall(made.headers.location!.replace(PUBLIC, w.server.url), {
      headers: { cookie: `rostercal_form=${form.cookie}` },
    });
    expect(shown.text).toContain(DONE_WORDS.reported);
    const undo = UNDO.exec(shown.text);
    expect(undo?.[1]).toBe(`${page}/absences/undo`);
    const undone = await postForm(w.server.url, undo![1]!, form.cookie, {
      csrf: form.csrf,
      absence: undo![2]!,
    });
    expect(undone.status).toBe(303);
    expect(undone.headers.location).toBe(
      `${page}?done=withdrawn&session=${form.session}#session-${form.session}`,
    );
    expect(UNDO.test((await absenceForm(w.server.url, page, form.cookie))!.page.text)).toBe(false);
    // The same Undo from a second tab opened before it: already withdrawn, not "not reported through this page",
    // nor "Undone" as if this press undid it.
    const again = await postForm(w.server.url, undo![1]!, form.cookie, {
      csrf: form.csrf,
      absence: undo![2]!,
    });
    expect(again.status, again.text).toBe(303);
    expect(again.headers.location).toMatch(new RegExp(`^${page}\\?done=already-withdrawn`));
  });

  it('from a family page: back to the family page', async () => {
    const a = await childWithForm(w.h, w.server.url);
    const b = await childWithForm(w.h, w.server.url, [a.student.id]);
    const made = await httpCall(`${w.server.url}/family`, {
      form: { from: a.token, links: `${PUBLIC}/feeds/${b.token}` },
    });
    expect(made.status).toBe(303);
    const familyPage = made.headers.location!;
    const form = (await absenceForm(w.server.url, familyPage))!;
    expect(form.action).toBe(`${familyPage}/absences`);
    const student = form.student || /name="student" value="(\d+)" required/.exec(form.page.text)![1]!;
    const r = await postForm(w.server.url, form.action, form.cookie, {
      csrf: form.csrf,
      session: form.session,
      student,
    });
    expect(r.status).toBe(303);
    expect(r.headers.location).toBe(
      `${familyPage}?done=reported&session=${form.session}#session-${form.session}`,
    );
  });
});

describe('what is refused', () => {
  it('ids that are not ids: a 400 page that says what is missing, nothing reported', async () => {
    const { form } = await childWithForm(w.h, w.server.url);
    const before = (await w.h.store.access.listAudit({ action: 'absence-report' })).length;
    for (const [session, student] of [
      ['abc', form.student],
      [form.session, ''],
      ['1e3', form.student],
      ['-1', form.student],
      ['1234567890123456', form.student],
      [`${form.session}.0`, form.student],
    ] as const) {
      const r = await postForm(w.server.url, form.action, form.cookie, { csrf: form.csrf, session, student });
      expect(r.status, `${session}/${student}`).toBe(400);
      expect(r.text).toContain('Choose the child and the session, then confirm.');
      expect(r.headers['cache-control']).toBe('no-store');
    }
    const undo = await postForm(w.server.url, `${form.action}/undo`, form.cookie, {
      csrf: form.csrf,
      absence: 'x',
    });
    expect(undo.status).toBe(400);
    expect(undo.text).toContain('Which absence to undo is missing.');
    expect((await w.h.store.access.listAudit({ action: 'absence-report' })).length).toBe(before);
  });

  it('a team’s page reports nothing (403); an unknown link gets the same 404 as its feed would', async () => {
    const { form } = await childWithForm(w.h, w.server.url);
    const team = (await w.h.store.records.list('hill', 'teams')).find((t) => !t.hidden)!;
    const teamToken = (await w.h.tokens.ensure('hill', 'team', team.id)).token!;
    const fields = { csrf: form.csrf, session: form.session, student: form.student };
    const asTeam = await postForm(w.server.url, `${PUBLIC}/feeds/${teamToken}/absences`, form.cookie, fields);
    expect(asTeam.status).toBe(403);
    expect(asTeam.text).toContain('only from a child’s own calendar page or a family page');
    const unknown = 'A'.repeat(43);
    const feed = await httpCall(`${w.server.url}/feeds/${unknown}`);
    expect(feed.status).toBe(404);
    for (const base of ['feeds', 'family']) {
      const r = await postForm(w.server.url, `${PUBLIC}/${base}/${unknown}/absences`, form.cookie, fields);
      expect(r.status, base).toBe(404);
      expect(r.text, base).toBe(feed.text);
    }
  });
});
