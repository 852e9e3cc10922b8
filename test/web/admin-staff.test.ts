// The admins' staff pages (web/admin-staff.ts) over HTTP with ADMIN_TOKEN, on the staff site of the sandbox's school
// pulled into a real SQLite store, a coach signed in through the real OpenID provider: the audit log refuses a
// filter it cannot apply (400), keeps only the action asked for, and names a family act's child as staff know them
// and a team by name (or says they are no longer listed); ending a person's sessions ends them everywhere, whatever
// the case of the address, and is audited; replacing a calendar link asks first, then stops the old link at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/store/types.ts';
import { auditRecord, type CoachSite, CookieJar, coachSite, signIn } from '../identity/harness.ts';

const TOKEN = 'admin-staff-token-0123456789abcdef0123';
const ACTOR = 'child link 5eed1e55';
let world: CoachSite;

beforeAll(async () => {
  world = await coachSite({ seed: 36, site: () => ({ adminToken: TOKEN }) });
}, 120_000);
afterAll(() => world?.close());

const asAdmin = (path: string, form?: Record<string, string>) =>
  fetch(`${world.site.url}${path}`, {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/html' },
    ...(form ? { body: new URLSearchParams(form) } : {}),
  });

const record = (r: Omit<Parameters<typeof auditRecord>[0], 'actor'>) => auditRecord({ actor: ACTOR, ...r });

describe('/admin/audit', () => {
  it('a filter it cannot apply is a 400 page that says why', async () => {
    const action = await asAdmin('/admin/audit?action=rm-rf');
    expect(action.status).toBe(400);
    expect(await action.text()).toContain('is not an action the audit log records');
    const team = await asAdmin(`/admin/audit?team=${encodeURIComponent('U14 Netball')}`);
    expect(team.status).toBe(400);
    expect(await team.text()).toContain('is not a team id');
  });

  it('a filter that can match nothing says so (400), lists what it takes and keeps what was typed', async () => {
    const template = await asAdmin('/admin/audit?template=nope');
    expect(template.status).toBe(400);
    const tBody = await template.text();
    expect(tBody).toContain(
      'oster template &quot;nope&quot; (attendance-sheet, match-day-sheet, medical-and-guardian-contacts, team-roster)',
    );
    expect(tBody).not.toContain('nothing recorded');
    // The form stays, so the admin can mend the value; the template is chosen from the ones there are.
    expect(tBody).toMatch(/<select id="template" name="template">.*<option value="team-roster">/s);
    // Not offered as a choice, and said first, above the form, beginning as a sentence does.
    expect(tBody).not.toContain('<option value="nope"');
    expect(tBody.indexOf('role="alert"')).toBeLessThan(tBody.indexOf('<form'));
    expect(tBody).toContain('<p>No roster template &quot;nope&quot;');

    const person = await asAdmin(`/admin/audit?person=notanemail&action=roster`);
    expect(person.status).toBe(400);
    const pBody = await person.text();
    expect(pBody).toContain('&quot;notanemail&quot; is not an e-mail address');
    expect(pBody).toContain('value="notanemail"');
    expect(pBody).toContain('<option value="roster" selected>');
    expect(pBody).not.toContain('nothing recorded');

    const team = await asAdmin('/admin/audit?team=999999999');
    expect(team.status).toBe(400);
    expect(await team.text()).toContain('No team has the id 999999999, and no audit record names it');

    // What the log holds still filters: the coach's address, a team since gone, "admin token".
    for (const ok of [
      `person=${encodeURIComponent(world.coach.email!)}`,
      'person=Admin+Token',
      'template=team-roster',
    ])
      expect((await asAdmin(`/admin/audit?${ok}`)).status, ok).toBe(200);
  });

  it('rows name a family act’s child and a team as staff know them, or say they are gone; the action filter keeps its own', async () => {
    const child = world.coachTeams[0]!.students[0]!;
    const student = (await world.h.store.records.get('hill', 'students', child.studentId))!;
    const team = world.coachTeams[0]!;
    const { access } = world.h.store;
    await access.appendAudit(
      record({ action: 'absence-report', detail: `student ${student.id}: reported (dentist)` }),
    );
    await access.appendAudit(
      record({ action: 'absence-refused', detail: 'student 987654321: refused (the form)' }),
    );
    await access.appendAudit(record({ action: 'roster', teamId: team.id, template: 'team-roster' }));
    await access.appendAudit(record({ action: 'roster', teamId: 987_654_321, template: 'team-roster' }));
    const all = await (await asAdmin(`/admin/audit?person=${encodeURIComponent(ACTOR)}`)).text();
    expect(all).toContain(
      `child ${student.firstName} ${student.lastName} <span class="muted">(student ${student.id})</span>`,
    );
    expect(all).toContain('child no longer listed <span class="muted">(student 987654321)</span>');
    expect(all).toContain(`${team.name} <span class="muted">(${team.id})</span>`);
    expect(all).toContain('a team no longer listed <span class="muted">(987654321)</span>');
    const reports = await (
      await asAdmin(`/admin/audit?person=${encodeURIComponent(ACTOR)}&action=absence-report`)
    ).text();
    expect(reports).toContain(`(student ${student.id})`);
    expect(reports).not.toContain('(student 987654321)');
    // The template select lists team-roster; no row names it.
    expect(reports).not.toContain('<span class="nowrap">team-roster</span>');
    const json = (await (
      await asAdmin(`/admin/audit?person=${encodeURIComponent(ACTOR)}&format=json`)
    ).json()) as {
      records: AuditRecord[];
    };
    expect(json.records.map((r) => r.action).sort()).toEqual([
      'absence-refused',
      'absence-report',
      'roster',
      'roster',
    ]);
  });
});

describe('/admin/sessions', () => {
  it('ends every session of a person (the address in any case) on every server, audited; no address is a 400', async () => {
    const email = world.coach.email!.toLowerCase();
    const jar = new CookieJar();
    await signIn(jar, world.site.url, String(world.coach.id));
    // Without following redirects: the provider's own session would sign the coach straight back in.
    const staff = async () =>
      (
        await fetch(`${world.site.url}/staff`, {
          redirect: 'manual',
          headers: { cookie: jar.header(world.site.url), accept: 'text/html' },
        })
      ).status;
    expect(await staff()).toBe(200);
    expect(await (await asAdmin('/admin/sessions')).text()).toContain(email);
    const ended = await asAdmin('/admin/sessions/end', { email: ` ${email.toUpperCase()} ` });
    expect(ended.status).toBe(200);
    expect(await ended.text()).toContain(`1 session of ${email} ended on every server`);
    expect([302, 303]).toContain(await staff());
    const [audit] = await world.h.store.access.listAudit({ action: 'sessions-ended', limit: 1 });
    expect(audit).toMatchObject({ actor: 'admin token', detail: `${email}: 1` });
    const none = await asAdmin('/admin/sessions/end', { email: '  ' });
    expect(none.status).toBe(400);
    expect(await none.text()).toContain('Give the e-mail address of the person.');
  });
});

describe('/admin/feeds/rotate', () => {
  it('asks first, naming who is subscribed; then the old link stops at once and the new page is shown', async () => {
    const team = world.coachTeams[0]!;
    const old = (await world.h.tokens.ensure('hill', 'team', team.id)).token!;
    expect((await fetch(`${world.site.url}/feeds/${old}.ics`)).status).toBe(200);
    const q = `school=hill&scope=team&id=${team.id}`;
    const never = await asAdmin(`/admin/feeds/rotated?${q}`);
    expect(never.status).toBe(404);
    const ask = await asAdmin(`/admin/feeds/rotate?${q}`);
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain(`the families of the ${team.students.length} students of`);
    expect((await fetch(`${world.site.url}/feeds/${old}.ics`)).status).toBe(200);
    const done = await asAdmin('/admin/feeds/rotate', { school: 'hill', scope: 'team', id: String(team.id) });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/admin/feeds/rotated?${q}`);
    expect((await fetch(`${world.site.url}/feeds/${old}.ics`)).status).toBe(404);
    const page = await (await asAdmin(`/admin/feeds/rotated?${q}`)).text();
    const fresh = (await world.h.tokens.ensure('hill', 'team', team.id)).token!;
    expect(fresh).not.toBe(old);
    expect(page).toContain(`/feeds/${fresh}`);
    const unknown = await asAdmin('/admin/feeds/rotate', { school: 'hill', scope: 'team', id: '987654321' });
    expect(unknown.status).toBe(404);
  });

  it('a form sent again (the browser’s Back) does not stop the link made since: 409, nothing changed', async () => {
    const team = world.coachTeams[1] ?? world.coachTeams[0]!;
    const q = `school=hill&scope=team&id=${team.id}`;
    await world.h.tokens.ensure('hill', 'team', team.id);
    const ask = await (await asAdmin(`/admin/feeds/rotate?${q}`)).text();
    const version = /name="version" value="(\d+)"/.exec(ask)?.[1];
    expect(version, 'the form names the version it stops').toBeDefined();
    const fields = { school: 'hill', scope: 'team', id: String(team.id), version: version! };
    const first = await asAdmin('/admin/feeds/rotate', fields);
    expect(first.status).toBe(303);
    const sent = (await world.h.tokens.ensure('hill', 'team', team.id)).token!;
    // Back, and the same form once more (an outside tester: it made version 3 and stopped the link just sent).
    const again = await asAdmin('/admin/feeds/rotate', fields);
    expect(again.status).toBe(409);
    const said = await again.text();
    expect(said).toContain('This link was already replaced');
    expect(said).toContain(`/admin/feeds/rotated?${q.replaceAll('&', '&amp;')}`);
    expect((await world.h.tokens.ensure('hill', 'team', team.id)).token).toBe(sent);
    expect((await fetch(`${world.site.url}/feeds/${sent}.ics`)).status).toBe(200);
    const bad = await asAdmin('/admin/feeds/rotate', { ...fields, version: 'latest' });
    expect(bad.status).toBe(400);
    expect((await world.h.tokens.ensure('hill', 'team', team.id)).token).toBe(sent);
  });
});
