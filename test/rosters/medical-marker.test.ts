// Attendance and match-day sheets mark a child with a medical condition (a discreet ✚ beside the name, no detail)
// only for a viewer allowed sensitive rosters: hand-built sheets read back with PDF.js, then the real staff site
// with a real OpenID sign-in, where the team's assigned coach gets the mark and a coach who sees the team only
// through an activity permission (not allowed medical data by default) gets the same sheet without it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StaffUser, Team } from '../../src/domain/types.ts';
import { staffAccess } from '../../src/identity/roles.ts';
import { MEDICAL_MARK } from '../../src/rosters/medical.ts';
import { renderSheet } from '../../src/rosters/render.ts';
import { buildSheet } from '../../src/rosters/sheet.ts';
import { loadTemplate } from '../../src/rosters/template.ts';
import { browse, type CoachSite, CookieJar, coachSite, type StaffSite, signIn } from '../identity/harness.ts';
import { containsText, pagePng, pdfText, qpdfCheck } from '../support/pdf.ts';
import { sampleData } from './sample-data.ts';

const fullName = (s: { firstName: string; lastName: string }) => `${s.firstName} ${s.lastName}`;

/** The line of the sheet (layout text) that carries the student's name. */
function nameLine(layout: string, name: string): string {
  const line = layout.split('\n').find((l) => containsText(l, name));
  if (!line) throw new Error(`no line with ${name} in:\n${layout}`);
  return line;
}

/** Which of the team's students have the mark beside their name on the PDF, and which do not. */
async function marks(pdf: Uint8Array, team: Pick<Team, 'students'>) {
  const layout = await pdfText(pdf, { layout: true });
  const marked = team.students.filter((s) => nameLine(layout, fullName(s)).includes(MEDICAL_MARK));
  return { layout, marked: marked.map((s) => s.studentId).sort((a, b) => a - b) };
}

const withCondition = (team: Pick<Team, 'students'>) =>
  team.students
    .filter((s) => s.medicalConditions.length > 0)
    .map((s) => s.studentId)
    .sort((a, b) => a - b);

describe('medical marker on attendance and match-day sheets (hand-built data)', () => {
  for (const name of ['attendance-sheet', 'match-day-sheet']) {
    it(`${name}: the mark beside exactly the children with a condition, for a viewer allowed to see it`, async () => {
      const template = loadTemplate(name);
      const data = sampleData(24, true);
      const expected = withCondition(data.team);
      expect(expected.length).toBeGreaterThan(1);
      expect(expected.length).toBeLessThan(data.team.students.length);
      const pdf = await renderSheet(buildSheet(template, data, { mayShowMedical: true }), template);
      await qpdfCheck(pdf);
      await pagePng(pdf, `${name}-medical-marker`);
      const { layout, marked } = await marks(pdf, data.team);
      expect(marked).toEqual(expected);
      // The legend says what it means, and nothing of any condition reaches the sheet.
      expect(layout).toContain(`${MEDICAL_MARK} = medical condition`);
      expect(layout).not.toContain('Asthma');
    });

    it(`${name}: no mark at all for a viewer without the right`, async () => {
      const template = loadTemplate(name);
      const data = sampleData(24, true);
      for (const sheet of [
        buildSheet(template, data),
        buildSheet(template, data, { mayShowMedical: false }),
      ]) {
        const pdf = await renderSheet(sheet, template);
        const { layout, marked } = await marks(pdf, data.team);
        expect(marked).toEqual([]);
        expect(layout).not.toContain(MEDICAL_MARK);
      }
    });
  }

  it('a template that does not ask for the mark never prints it', async () => {
    const template = loadTemplate('team-roster');
    const pdf = await renderSheet(
      buildSheet(template, sampleData(24, false), { mayShowMedical: true }),
      template,
    );
    expect(await pdfText(pdf)).not.toContain(MEDICAL_MARK);
  });
});

describe('medical marker on the staff site (signed in through the school’s provider)', () => {
  let world: CoachSite;
  let site: StaffSite;
  let assigned: { user: StaffUser; team: Team };
  let viaActivity: { user: StaffUser; team: Team };

  beforeAll(async () => {
    // The school keeps medical data: a pull with sensitive rosters on reads it.
    const w = await coachSite({
      pick: ({ teams, staff }) => {
        // A team with children with and without a condition, and with an upcoming session to print.
        const printable = (t: Team) =>
          withCondition(t).length > 0 && withCondition(t).length < t.students.length;
        const pick = (mine: (a: ReturnType<typeof staffAccess>, t: Team) => boolean) => {
          for (const user of staff) {
            const access = staffAccess(user, teams);
            const team = teams.find((t) => printable(t) && mine(access, t));
            if (team) return { user, team };
          }
          throw new Error('no such coach in the generated school');
        };
        const a = pick((a, t) => a.assignedTeamIds.has(t.id));
        const v = pick((a, t) => a.teamIds.has(t.id) && !a.assignedTeamIds.has(t.id));
        return { coach: a.user, others: [v.user], assigned: a, viaActivity: v };
      },
    });
    world = w;
    expect(w.summary.status).toBe('succeeded');
    ({ site, assigned, viaActivity } = w);
  }, 120_000);

  afterAll(() => world?.close());

  async function sheet(who: { user: StaffUser; team: Team }, template: string) {
    const jar = new CookieJar();
    await signIn(jar, site.url, String(who.user.id));
    const res = await fetch(`${site.url}/rosters/teams/${who.team.id}.pdf?template=${template}`, {
      headers: { cookie: jar.header(site.url) },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const pdf = new Uint8Array(await res.arrayBuffer());
    await qpdfCheck(pdf);
    return pdf;
  }

  it('the assigned coach: the mark beside exactly the children with a condition', async () => {
    const pdf = await sheet(assigned, 'attendance-sheet');
    expect((await marks(pdf, assigned.team)).marked).toEqual(withCondition(assigned.team));
  });

  it('a coach who may see the team but not its medical data: the sheet, without any mark', async () => {
    // Refused the medical sheet itself (the same rule)…
    const jar = new CookieJar();
    await signIn(jar, site.url, String(viaActivity.user.id));
    const medical = await browse(
      jar,
      `${site.url}/rosters/teams/${viaActivity.team.id}.pdf?template=medical-and-guardian-contacts`,
    );
    expect(medical.res.status).toBe(403);
    // …and given the attendance sheet with no mark.
    const pdf = await sheet(viaActivity, 'attendance-sheet');
    const { layout, marked } = await marks(pdf, viaActivity.team);
    expect(marked).toEqual([]);
    expect(layout).not.toContain(MEDICAL_MARK);
  });
});
