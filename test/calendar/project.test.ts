import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProjectionContext } from '../../src/calendar/context.ts';
import { orderCustomFields, projectSession } from '../../src/calendar/project.ts';
import { loadEventTemplates } from '../../src/calendar/templates.ts';
import { ctx, customFields, session } from './fixtures.ts';

describe('projectSession: titles', () => {
  it("keeps the school's own title, adding the team's name where the title lacks it (issue 13 item 1)", () => {
    const team = (name: string) => [
      { id: 10, name, category: null, subcategory: null, customFieldsData: {} },
    ];
    const title = (over: Partial<Parameters<typeof session>[0]>, scope?: { scope: 'team'; id: number }) =>
      projectSession(session(over), ctx(), 'guardian', scope)!.title;
    expect(
      title({ title: 'Intermediate Basketball A Training', teams: team('Intermediate Basketball A') }),
    ).toBe('Intermediate Basketball A Training');
    expect(title({ title: 'Open Choir D Rehearsal', teams: team('Open Choir D') })).toBe(
      'Open Choir D Rehearsal',
    );
    expect(title({ title: 'Grand Final', scored: true, teams: team('U15 Football') })).toBe(
      'U15 Football: Grand Final',
    );
    expect(title({ title: 'Photo day', teams: team('U15 Football') })).toBe('U15 Football: Photo day');
    // A title saying less than the team's name, or nothing, gives the team's name (as before).
    expect(title({ title: 'Football', teams: team('U15 Football') })).toBe('U15 Football');
    expect(title({ title: '  ', teams: team('U15 Football') })).toBe('U15 Football');
    // Fixtures: the opponent is named once, whether or not the school's title names it.
    expect(title({ title: 'U15 Football vs Hillside', scored: true, opponent: 'Hillside' })).toBe(
      'U15 Football vs Hillside (home)',
    );
    expect(title({ title: 'Grand Final', scored: true, opponent: 'Hillside' })).toBe(
      'U15 Football: Grand Final vs Hillside (home)',
    );
    expect(title({ title: 'U15 Football Training', cancelled: true })).toBe(
      'Cancelled: U15 Football Training',
    );
  });

  it('names a training session by activity and team without repeating the activity', () => {
    const e = projectSession(session(), ctx(), 'guardian')!;
    expect(e.title).toBe('U15 Football');
    const e2 = projectSession(
      session({
        title: '',
        teams: [{ id: 11, name: 'Senior A', category: null, subcategory: null, customFieldsData: {} }],
      }),
      ctx(),
      'guardian',
    )!;
    expect(e2.title).toBe('Football Senior A');
  });

  it('falls back to the session title without a team', () => {
    const e = projectSession(session({ teams: [], title: 'Open nets' }), ctx(), 'guardian')!;
    expect(e.title).toBe('Open nets');
  });

  it('marks fixtures home or away from the location owner', () => {
    const home = projectSession(session({ scored: true, opponent: 'Hillside' }), ctx(), 'guardian')!;
    expect(home.title).toBe('U15 Football vs Hillside (home)');
    const awayLoc = {
      id: 8,
      name: 'Hillside Ground',
      address: null,
      latitude: null,
      longitude: null,
      owner: { id: 99, name: 'Hillside College', acronym: 'HC', shortName: null },
    };
    const away = projectSession(
      session({ scored: true, opponent: 'Hillside', location: awayLoc }),
      ctx(),
      'guardian',
    )!;
    expect(away.title).toBe('U15 Football vs Hillside (away)');
    // the school's owners decide, never a name: another owner list turns the same venues round
    const byId = projectSession(
      session({ scored: true, opponent: 'Hillside', location: awayLoc }),
      ctx({ locationOwnerIds: [99] }),
      'guardian',
    )!;
    expect(byId.title).toBe('U15 Football vs Hillside (home)');
    const unknown = projectSession(
      session({ scored: true, opponent: 'Hillside', location: null }),
      ctx(),
      'guardian',
    )!;
    expect(unknown.title).toBe('U15 Football vs Hillside');
    // owners unknown: neutral wording, not "away" because a name differs (issue 26)
    const noOwners = projectSession(
      session({ scored: true, opponent: 'Hillside' }),
      ctx({ locationOwnerIds: [] }),
      'guardian',
    )!;
    expect(noOwners.title).toBe('U15 Football vs Hillside');
    expect(unknown.categories).toEqual(['Football', 'Fixture']);
  });

  it('writes byes and results', () => {
    expect(projectSession(session({ scored: true, bye: true }), ctx(), 'guardian')!.title).toBe(
      'U15 Football: no game (bye)',
    );
    const s = { scored: true, opponent: 'Hillside', location: null };
    const cases: [Partial<Parameters<typeof session>[0]>, string][] = [
      [{ result: 'win', organisationScore: '3', opponentScore: '1' }, 'Won 3–1'],
      [{ result: 'loss', organisationScore: '0', opponentScore: '2' }, 'Lost 0–2'],
      [{ result: 'draw', organisationScore: '1', opponentScore: '1' }, 'Draw 1–1'],
      [{ result: null, organisationScore: '4', opponentScore: '2' }, 'Won 4–2'],
      [{ result: 'win' }, 'Won'],
      [{ result: 'forfeit' }, 'Lost by forfeit'],
      [{ result: 'opponent-forfeit' }, 'Won by forfeit'],
      [{ result: 'no-result' }, 'No result'],
    ];
    for (const [over, text] of cases) {
      const e = projectSession(session({ ...s, ...over }), ctx(), 'guardian')!;
      expect(e.title).toBe(`U15 Football vs Hillside – ${text}`);
      expect(e.description).toContain(`Result: ${text}`);
    }
    expect(projectSession(session(s), ctx(), 'guardian')!.description).not.toContain('Result');
  });

  /** A team whose custom field says what to wear: dropped when there is nothing to attend. */
  const teamWithKit = {
    id: 10,
    name: 'U15 Football',
    category: null,
    subcategory: null,
    customFieldsData: { kit: 'Training kit' },
  };

  it('a bye is no game, with nothing to attend: no meet time or uniform, free time, marked (issue 42)', () => {
    const s = session({
      scored: true,
      bye: true,
      studentParentNotes: 'No game this week (bye).',
      customFieldsData: { meet: '12:30', lead: [41] },
      teams: [teamWithKit],
    });
    for (const audience of ['guardian', 'student', 'staff'] as const) {
      const e = projectSession(s, ctx(), audience)!;
      expect(e.title).toBe('U15 Football: no game (bye)');
      expect(e.noGame, audience).toBe(true);
      expect(e.description).toContain('No game this week (bye).');
      expect(e.description).not.toContain('Meet time');
      expect(e.description).not.toContain('Training kit');
    }
    // Every other session carries no such mark (so what it hashes to is as before).
    expect('noGame' in projectSession(session({}), ctx(), 'guardian')!).toBe(false);
  });

  it('prefixes cancellations and sets STATUS', () => {
    const e = projectSession(session({ cancelled: true, title: 'U15 Football' }), ctx(), 'guardian')!;
    expect(e.title).toBe('Cancelled: U15 Football');
    expect(e.status).toBe('cancelled');
    expect(e.description).toContain('cancelled');
  });

  it('a cancelled session says so once, first, without meet time or uniform (issue 13 item 8)', () => {
    const s = session({
      cancelled: true,
      studentParentNotes: 'This session is cancelled.',
      notes: 'Cancelled: wet weather / venue unavailable.',
      customFieldsData: { meet: '15:10', lead: [41] },
      teams: [teamWithKit],
    });
    for (const audience of ['guardian', 'student', 'staff'] as const) {
      const d = projectSession(s, ctx(), audience)!.description;
      expect(d.startsWith('This session has been cancelled.'), `${audience}: ${d}`).toBe(true);
      expect(d.match(/cancel/gi)?.length, `${audience}: ${d}`).toBe(audience === 'staff' ? 2 : 1);
      expect(d).not.toContain('Meet time');
      expect(d).not.toContain('Kit:');
      expect(d).not.toContain('Training kit');
    }
    // A reason or a make-up date in the parent note is kept.
    const withReason = projectSession(
      session({ cancelled: true, studentParentNotes: 'Training is cancelled. Make-up session on Friday.' }),
      ctx(),
      'guardian',
    )!;
    expect(withReason.description).toBe('This session has been cancelled.\n\nMake-up session on Friday.');
  });

  it('hides drafts from guardians and students and marks them for staff; marks unconfirmed', () => {
    const draft = session({ scored: true, opponent: 'Hillside', status: 'draft' });
    expect(projectSession(draft, ctx(), 'guardian')).toBeNull();
    expect(projectSession(draft, ctx(), 'student')).toBeNull();
    const staff = projectSession(draft, ctx(), 'staff')!;
    expect(staff.title).toBe('[Draft] U15 Football vs Hillside (home)');
    expect(staff.status).toBe('tentative');
    const unconf = projectSession(session({ status: 'unconfirmed' }), ctx(), 'guardian')!;
    expect(unconf.title).toBe('U15 Football (unconfirmed)');
    expect(unconf.status).toBe('tentative');
    expect(unconf.description).toMatch(/not yet confirmed/i);
  });

  it('returns null for deleted records', () => {
    expect(projectSession(session({}, { deletedAt: '2026-03-02T00:00:00.000Z' }), ctx(), 'staff')).toBeNull();
  });
});

describe('projectSession: description and privacy', () => {
  const s = session({
    notes: 'INTERNAL-ONLY: bus deposit unpaid',
    studentParentNotes: 'Bring shin pads; pick-up 17:15',
    customFieldsData: { meet: '9:05', bus: 'Acme Coaches', lead: [41], captain: [502] },
    teams: [
      {
        id: 10,
        name: 'U15 Football',
        category: null,
        subcategory: null,
        customFieldsData: { kit: 'Away kit' },
      },
    ],
  });

  it('guardians get parent notes and guardian-visible fields only, no student names', () => {
    const e = projectSession(s, ctx(), 'guardian')!;
    expect(e.description).toContain('Bring shin pads; pick-up 17:15');
    expect(e.description).not.toContain('INTERNAL-ONLY');
    expect(e.description).not.toContain('Acme Coaches');
    expect(e.description).toContain('Meet time: 09:05\nKit: Away kit\nLead coach: Dev Assistant');
    expect(e.description).not.toContain('Captain');
    for (const name of ['Ana', 'Lima', 'Ben', 'Ode', '502']) expect(e.description).not.toContain(name);
    expect(e.description).not.toContain('Carla');
  });

  it('students see student-visible fields only', () => {
    const e = projectSession(s, ctx(), 'student')!;
    expect(e.description).toContain('Kit: Away kit');
    expect(e.description).not.toContain('Lead coach');
    expect(e.description).not.toContain('Ben Ode');
  });

  it('staff get internal notes, every staff field in order, names resolved, staff and teams', () => {
    const e = projectSession(s, ctx(), 'staff')!;
    expect(e.description).toContain('Staff notes:\nINTERNAL-ONLY: bus deposit unpaid');
    expect(e.description).toContain('Notes for students and guardians:\nBring shin pads');
    expect(e.description).toContain(
      'Meet time: 09:05\nKit: Away kit\nBus company: Acme Coaches\nLead coach: Dev Assistant\nCaptain: Ben Ode',
    );
    expect(e.description).toContain('Staff: Carla Coach');
    expect(e.description).toContain('Teams: U15 Football');
    expect(e.description).toContain('Students listed: 2');
  });

  it('carries location with GEO, colour, UID, SEQUENCE and LAST-MODIFIED', () => {
    const e = projectSession(
      session({ id: 77 }, { version: 4, updatedAt: '2026-03-05T08:00:00.000Z' }),
      ctx(),
      'guardian',
      {
        scope: 'team',
        id: 10,
      },
    )!;
    expect(e.location).toEqual({
      name: 'Main Field',
      address: '1 School Lane, Townsville',
      latitude: 51.5,
      longitude: -0.12,
    });
    expect(e.color).toBe('#1e88e5');
    expect(e.uid).toBe('session-77-team-10@riverside.rostercal');
    expect(e.sequence).toBe(4);
    expect(e.lastModified).toBe('2026-03-05T08:00:00.000Z');
    expect(e.timeZone).toBe('Europe/London');
    expect(projectSession(session({ id: 77 }), ctx(), 'guardian')!.uid).toBe(
      'session-77@riverside.rostercal',
    );
  });
});

describe('custom field order', () => {
  it('follows showAfterField chains and keeps cycles', () => {
    const shuffled = [
      customFields[3]!,
      customFields[0]!,
      customFields[4]!,
      customFields[2]!,
      customFields[1]!,
    ];
    expect(orderCustomFields(shuffled).map((f) => f.key)).toEqual(['meet', 'kit', 'bus', 'lead', 'captain']);
    const cyc = orderCustomFields([
      { key: 'a', label: 'A', dataType: 'short-text', showToUserTypes: [], showAfterField: 'b' },
      { key: 'b', label: 'B', dataType: 'short-text', showToUserTypes: [], showAfterField: 'a' },
    ]);
    expect(cyc.map((f) => f.key)).toEqual(['a', 'b']);
  });
});

describe('event templates', () => {
  it('a school file overrides wording; unknown placeholders are rejected naming the key', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tpl-'));
    const base = loadEventTemplates();
    writeFileSync(path.join(dir, 'default.json'), JSON.stringify(base));
    writeFileSync(path.join(dir, 'hill.json'), JSON.stringify({ title: { cancelled: 'ABGESAGT: {title}' } }));
    const t = loadEventTemplates({ dir, schoolId: 'hill' });
    const c = createProjectionContext({
      school: { id: 'hill', name: 'Hill', timeZone: 'Europe/Berlin' },
      templates: t,
    });
    expect(projectSession(session({ cancelled: true }), c, 'guardian')!.title).toBe('ABGESAGT: U15 Football');
    writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ title: { bye: '{nmae}: bye' } }));
    expect(() => loadEventTemplates({ dir, schoolId: 'bad' })).toThrow(
      /title\.bye: unknown placeholder \{nmae\}/,
    );
  });
});

describe('student names in free text', () => {
  const s = session({
    teams: [],
    title: 'Piano lesson – Ben Ode',
    studentParentNotes:
      'Ana  Lima and BEN ODE share the room; Benjamin Oder is not a student. Anabel Limao neither. Ana brings the music.',
  });
  it('are replaced for guardians, except the own student in their student feed; staff see them', () => {
    const g = projectSession(s, ctx(), 'guardian', { scope: 'activity', id: 1 })!;
    expect(g.title).toBe('Piano lesson – (a student)');
    expect(g.description).toBe(
      '(a student) and (a student) share the room; Benjamin Oder is not a student. Anabel Limao neither. (a student) brings the music.',
    );
    const own = projectSession(s, ctx(), 'guardian', { scope: 'student', id: 502 })!;
    expect(own.title).toBe('Piano lesson – Ben Ode');
    expect(own.description).toContain('(a student) and BEN ODE share');
    const staff = projectSession(s, ctx(), 'staff')!;
    expect(staff.title).toBe('Piano lesson – Ben Ode');
    expect(staff.description).toContain('Ana  Lima and BEN ODE');
  });
});
