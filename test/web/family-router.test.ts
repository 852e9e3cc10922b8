// One link for the family, over real HTTP: from a child's landing page the parent pastes the other links,
// gets one capability URL; a session shared by two children appears once naming only those children; a child
// whose own URL is rotated drops out; mistakes are explained (400), never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/web/server.ts';
import { type Harness, httpCall, startHarness } from '../feeds/harness.ts';
import { parseBoth } from '../feeds/parse.ts';

const call = httpCall;

const PUBLIC = 'https://cal.example.org';
let h: Harness;
let server: RunningServer;
const local = (url: string) => url.replace(PUBLIC, server.url);

beforeAll(async () => {
  h = await startHarness();
  server = await h.serve({ publicUrl: PUBLIC });
});
afterAll(async () => {
  await h?.close();
});

/** Two children who share a team (different first names) and a third in another team without them. */
async function family() {
  const teams = await h.store.records.list('hill', 'teams');
  const students = new Map((await h.store.records.list('hill', 'students')).map((s) => [s.id, s]));
  for (const t of teams) {
    const ids = t.students.map((m) => m.studentId).filter((id) => students.get(id)?.current);
    for (const a of ids) {
      for (const b of ids) {
        const A = students.get(a)!;
        const B = students.get(b)!;
        if (a === b || A.firstName === B.firstName) continue;
        const other = teams.find(
          (x) =>
            x.id !== t.id &&
            !x.students.some((m) => m.studentId === a || m.studentId === b) &&
            x.students.some((m) => {
              const s = students.get(m.studentId);
              return s?.current && s.firstName !== A.firstName && s.firstName !== B.firstName;
            }),
        );
        if (!other) continue;
        const c = other.students.find((m) => {
          const s = students.get(m.studentId);
          return s?.current && s.firstName !== A.firstName && s.firstName !== B.firstName;
        })!.studentId;
        return { a: A, b: B, c: students.get(c)!, shared: t };
      }
    }
  }
  throw new Error('no family found in the sandbox school');
}

const sessionOf = (uid: string) => Number(/^session-(\d+)-/.exec(uid)![1]);

async function sessionsOfFeed(token: string): Promise<Set<number>> {
  const r = await call(`${server.url}/feeds/${token}.ics`);
  expect(r.status).toBe(200);
  return new Set(parseBoth(r.text).events.map((e) => sessionOf(e.uid)));
}

describe('one link for the family', () => {
  it('from a landing page: paste other links, get one URL; shared sessions once, naming only those children; rotation drops a child', async () => {
    const f = await family();
    const ta = (await h.tokens.ensure('hill', 'student', f.a.id)).token!;
    const tb = (await h.tokens.ensure('hill', 'student', f.b.id)).token!;
    const tc = (await h.tokens.ensure('hill', 'student', f.c.id)).token!;

    // The form on A's page.
    const page = await call(`${server.url}/feeds/${ta}`);
    const action = /<form method="post" action="([^"]+)">/.exec(page.text)?.[1];
    expect(action).toBe(`${PUBLIC}/family`);
    expect(page.text).toContain(`<input type="hidden" name="from" value="${ta}">`);
    expect(page.text).toContain("Add another child's link");

    // Pasted as they come: a page URL and a calendar URL among other words.
    const made = await call(local(action!), {
      form: { from: ta, links: `Ben's: ${PUBLIC}/feeds/${tb}\n webcal://cal.example.org/feeds/${tc}.ics ` },
    });
    expect(made.status).toBe(303);
    const familyUrl = made.headers.location!;
    expect(familyUrl).toMatch(new RegExp(`^${PUBLIC}/family/[A-Za-z0-9_-]{32}$`));
    const familyToken = familyUrl.split('/').pop()!;
    for (const t of [ta, tb, tc]) expect(familyUrl).not.toContain(t);

    const familyPage = await call(local(familyUrl));
    expect(familyPage.status).toBe(200);
    for (const s of [f.a, f.b, f.c])
      expect(familyPage.text).toContain(`<span class="member">${s.firstName}</span>`);
    expect(familyPage.text).toContain(`webcal://cal.example.org/family/${familyToken}.ics`);
    expect(familyPage.text).toContain(`<input type="hidden" name="from" value="${familyToken}">`);

    const own = {
      [f.a.firstName]: await sessionsOfFeed(ta),
      [f.b.firstName]: await sessionsOfFeed(tb),
      [f.c.firstName]: await sessionsOfFeed(tc),
    };
    const check = async (names: string[]) => {
      const r = await call(local(`${familyUrl}.ics`));
      expect(r.status).toBe(200);
      // The notice of a child who dropped out (issue 42) is not a session.
      const events = parseBoth(r.text).events.filter((e) => e.uid.startsWith('session-'));
      const ids = events.map((e) => sessionOf(e.uid));
      expect(new Set(ids).size).toBe(ids.length);
      const union = new Set(names.flatMap((n) => [...own[n]!]));
      expect(new Set(ids)).toEqual(union);
      let shared = 0;
      for (const e of events) {
        const who = names.filter((n) => own[n]!.has(sessionOf(e.uid)));
        expect(e.summary.endsWith(` (${who.join(', ')})`), e.summary).toBe(true);
        if (who.length > 1) shared++;
      }
      return { shared, text: r.text };
    };
    const before = await check([f.a.firstName, f.b.firstName, f.c.firstName]);
    expect(before.shared).toBeGreaterThan(0);

    // B's own URL is rotated: B drops out of the family link; the shared sessions now name A alone.
    await h.tokens.rotate('hill', 'student', f.b.id);
    const after = await check([f.a.firstName, f.c.firstName]);
    expect(after.text).not.toContain(`${f.b.firstName})`);
    const afterPage = await call(local(familyUrl));
    expect(afterPage.text).not.toContain(`<span class="member">${f.b.firstName}</span>`);

    // Reminders on the family calendar too.
    const withAlarm = await call(local(`${familyUrl}.ics?reminder=2h`));
    expect(withAlarm.text).toContain('TRIGGER:-PT2H');

    // Every member rotated: the link does not go quiet (issue 42): its page names each child and how to add
    // them back; its calendar holds one notice per child and no session.
    await h.tokens.rotate('hill', 'student', f.a.id);
    await h.tokens.rotate('hill', 'student', f.c.id);
    const emptied = await call(local(familyUrl));
    expect(emptied.status).toBe(200);
    for (const s of [f.a, f.b, f.c])
      expect(emptied.text).toContain(`${s.firstName} is no longer in this calendar`);
    const emptiedIcs = parseBoth((await call(local(`${familyUrl}.ics`))).text);
    expect(emptiedIcs.events.map((e) => e.summary).sort()).toEqual(
      [f.a, f.b, f.c].map((s) => `${s.firstName} is no longer in this calendar: a new link is needed`).sort(),
    );
  });

  it('two children of the link who share a first name are told apart by their full names', async () => {
    const students = (await h.store.records.list('hill', 'students')).filter((s) => s.current);
    const byFirst = new Map<string, typeof students>();
    for (const s of students) byFirst.set(s.firstName, [...(byFirst.get(s.firstName) ?? []), s]);
    const [a, b] = [...byFirst.values()].find((list) => list.length > 1)!;
    expect(b, 'the sandbox school has two current students with one first name').toBeDefined();
    const ta = (await h.tokens.ensure('hill', 'student', a!.id)).token!;
    const tb = (await h.tokens.ensure('hill', 'student', b!.id)).token!;
    const made = await call(`${server.url}/family`, { form: { from: ta, links: `${PUBLIC}/feeds/${tb}` } });
    expect(made.status).toBe(303);
    const familyUrl = local(made.headers.location!);
    const full = [a!, b!].map((s) => `${s.firstName} ${s.lastName}`);

    const page = await call(familyUrl);
    for (const name of full) expect(page.text).toContain(`<span class="member">${name}</span>`);
    const ics = await call(`${familyUrl}.ics`);
    const parsed = parseBoth(ics.text);
    expect(ics.text).not.toContain(`${a!.firstName} and ${b!.firstName} \u00b7`);
    for (const e of parsed.events)
      expect(
        full.some((name) => e.summary.includes(name)),
        `${e.summary} names which child`,
      ).toBe(true);

    // One of them rotated: the two are still told apart, on the page, in its notice and in the calendar (the
    // tester saw "Ánh · Demo School", "Ánh is no longer in this calendar", "Includes: Ánh").
    await h.tokens.rotate('hill', 'student', b!.id);
    const [stays, gone] = full as [string, string];
    const after = await call(familyUrl);
    expect(after.status).toBe(200);
    expect(after.text).toContain(`<span class="member">${stays}</span>`);
    expect(after.text).toContain(`${gone} is no longer in this calendar`);
    expect(after.text).not.toContain(`>${a!.firstName} is no longer`);
    const afterIcs = await call(`${familyUrl}.ics`);
    const unfolded = afterIcs.text.replace(/\r\n[ \t]/g, '');
    expect(unfolded).toContain(`X-WR-CALNAME:${stays} \u00b7`);
    expect(unfolded).toContain(`SUMMARY:${gone} is no longer in this calendar`);
    expect(unfolded).not.toMatch(new RegExp(`SUMMARY:${a!.firstName} is no longer`));
  });

  it('explains what went wrong instead of making a link: unknown, staff, nothing added; never a 500', async () => {
    const team = h.sandbox.school.teams[0]!;
    const tt = (await h.tokens.ensure('hill', 'team', team.id)).token!;
    const staff = (await h.store.records.list('hill', 'staff')).find((s) => !s.frozen)!;
    const ts = (await h.tokens.ensure('hill', 'staff', staff.id)).token!;
    const post = (form: Record<string, string>) => call(`${server.url}/family`, { form });

    const unknown = await post({ from: tt, links: `${PUBLIC}/feeds/${'x'.repeat(32)}` });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('One link was not recognised');
    expect(unknown.text).toContain(`href="${PUBLIC}/feeds/${tt}"`);

    // What was pasted is kept: the form comes back filled in, to mend one line, not to paste every link again.
    const child = (await h.store.records.list('hill', 'students')).find((s) => s.current)!;
    const tc = (await h.tokens.ensure('hill', 'student', child.id)).token!;
    const pasted = `${PUBLIC}/feeds/${tc}\n${PUBLIC}/feeds/${'x'.repeat(32)}`;
    const kept = await post({ from: tt, links: pasted });
    expect(kept.status).toBe(400);
    expect(kept.text).toContain('One link was not recognised');
    expect(kept.text).toContain(`<input type="hidden" name="from" value="${tt}">`);
    expect(kept.text).toMatch(
      new RegExp(
        `<textarea id="family-links" name="links"[^>]*>${pasted.replace(/[.\\/]/g, '\\$&')}</textarea>`,
      ),
    );
    expect(kept.text).toContain('Make one family link');
    expect(kept.headers['content-security-policy']).toContain("form-action 'self'");
    expect(kept.headers['cache-control']).toBe('no-store');

    const withStaff = await post({ from: tt, links: `${PUBLIC}/feeds/${ts}` });
    expect(withStaff.status).toBe(400);
    expect(withStaff.text).toContain('A staff calendar cannot be part of a family link');

    const nothing = await post({ from: tt, links: '' });
    expect(nothing.status).toBe(400);
    expect(nothing.text).toContain('Paste at least one more calendar link');

    const huge = await call(`${server.url}/family`, { body: `from=${tt}&links=${'a'.repeat(40_000)}` });
    expect(huge.status).toBe(413);
    expect((await call(`${server.url}/family/${'y'.repeat(32)}`)).status).toBe(404);
    expect((await call(`${server.url}/family/nope.ics`)).status).toBe(404);
  });
});
