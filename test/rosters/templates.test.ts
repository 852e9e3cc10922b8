// Roster templates: the shipped ones are valid; a school's own are found, validated with errors that name the file
// and the field, and may not print medical or guardian data without saying so in their name or title.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { RosterError, templateFor } from '../../src/rosters/index.ts';
import { loadAllTemplates, loadTemplate, TemplateError, templateNames } from '../../src/rosters/template.ts';

function schoolDir(files: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rostercal-templates-'));
  for (const [name, body] of Object.entries(files)) {
    writeFileSync(join(dir, name), typeof body === 'string' ? body : JSON.stringify(body, null, 2));
  }
  return dir;
}

const minimal = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  title: 'Bus list',
  columns: [{ field: 'number' }, { field: 'preferredName' }],
  ...extra,
});

describe('roster templates', () => {
  it('ships team-roster, attendance-sheet and match-day-sheet, all valid', () => {
    const { templates, errors } = loadAllTemplates({ dir: null });
    expect(errors).toEqual([]);
    expect(templates.map((t) => t.name)).toEqual(
      expect.arrayContaining(['team-roster', 'attendance-sheet', 'match-day-sheet']),
    );
    expect(loadTemplate('attendance-sheet').session).toBe('required');
    expect(loadTemplate('match-day-sheet').session).toBe('fixture');
    expect(loadTemplate('match-day-sheet').after).toContain('result');
  });

  it("finds a school's own templates in ROSTER_TEMPLATES_DIR, which may override a shipped one", async () => {
    const dir = schoolDir({
      'bus-list.json': minimal('bus-list'),
      'team-roster.json': minimal('team-roster', { title: 'Our roster' }),
    });
    // The configuration reads the environment; the templates module is handed the directory.
    const source = { dir: (await loadConfig({ ROSTER_TEMPLATES_DIR: dir })).rosterTemplatesDir };
    expect(templateNames(source)).toEqual(
      expect.arrayContaining(['bus-list', 'team-roster', 'attendance-sheet']),
    );
    expect(loadTemplate('bus-list', source).title).toBe('Bus list');
    expect(loadTemplate('team-roster', source).title).toBe('Our roster');
    // An explicit option wins over the environment.
    expect(loadTemplate('team-roster', { dir: null }).title).toBe('Team roster');
  });

  it('names the file and the field of every problem', () => {
    const dir = schoolDir({
      'broken.json': {
        name: 'broken',
        title: 'Broken',
        page: { size: 'B7' },
        columns: [{ field: 'number' }, { field: 'shoeSize' }],
        blankRows: -1,
      },
      'not-json.json': '{ "name": ',
    });
    let message = '';
    try {
      loadTemplate('broken', { dir });
    } catch (err) {
      expect(err).toBeInstanceOf(TemplateError);
      message = (err as Error).message;
    }
    expect(message).toContain(join(dir, 'broken.json'));
    expect(message).toContain('page.size');
    expect(message).toContain('columns[1].field');
    expect(message).toContain('blankRows');
    expect(() => loadTemplate('not-json', { dir })).toThrow(/not-json\.json: not valid JSON/);
    const all = loadAllTemplates({ dir });
    expect(all.errors).toHaveLength(2);
    expect(all.templates.map((t) => t.name)).toContain('team-roster');
  });

  it('requires a template that prints medical or guardian data to say so in its name or title', () => {
    const dir = schoolDir({
      'trip-sheet.json': minimal('trip-sheet', {
        title: 'Trip sheet',
        columns: [{ field: 'preferredName' }, { field: 'medical' }, { field: 'guardianContact' }],
      }),
      'trip-medical-contacts.json': minimal('trip-medical-contacts', {
        title: 'Trip sheet',
        columns: [{ field: 'preferredName' }, { field: 'medical' }, { field: 'guardianContact' }],
      }),
      'first-aid.json': minimal('first-aid', {
        title: 'First aid: medical conditions',
        columns: [{ field: 'preferredName' }, { field: 'medical' }],
      }),
    });
    expect(() => loadTemplate('trip-sheet', { dir })).toThrow(
      /columns\[1\]\.field: the template prints medical data/,
    );
    expect(() => loadTemplate('trip-sheet', { dir })).toThrow(
      /columns\[2\]\.field: the template prints guardian contact data/,
    );
    expect(loadTemplate('trip-medical-contacts', { dir }).columns).toHaveLength(3);
    expect(loadTemplate('first-aid', { dir }).name).toBe('first-aid');
  });

  it('rejects session facts on a team template, a name that does not match the file, and columns too wide', () => {
    const dir = schoolDir({
      'no-session.json': minimal('no-session', {
        header: ['school', 'opponent'],
        columns: [{ field: 'absence' }],
      }),
      'mismatch.json': minimal('other-name'),
      'too-wide.json': minimal('too-wide', {
        columns: Array.from({ length: 12 }, () => ({ field: 'studentId' })),
      }),
    });
    expect(() => loadTemplate('no-session', { dir })).toThrow(/header\[1\]: "opponent" is a session fact/);
    expect(() => loadTemplate('no-session', { dir })).toThrow(
      /columns\[0\]\.field: "absence" needs a session/,
    );
    expect(() => loadTemplate('mismatch', { dir })).toThrow(
      /name: "other-name" must match the file name "mismatch.json"/,
    );
    expect(() => loadTemplate('too-wide', { dir })).toThrow(
      /columns: the columns need \d+ pt but the page has \d+ pt/,
    );
  });

  it('says which templates exist when asked for an unknown one', () => {
    expect(() => loadTemplate('nope', { dir: null })).toThrow(
      /unknown roster template "nope"; available: .*team-roster/,
    );
    expect(() => loadTemplate('../etc/passwd', { dir: null })).toThrow(/unknown roster template/);
  });

  it('an unknown template is the request’s mistake (404), an invalid one the school’s (500), by type', () => {
    const dir = schoolDir({ 'bus-list.json': { ...minimal('bus-list'), columns: 'none' } });
    const caught = (name: string): RosterError => {
      try {
        templateFor(name, { dir });
      } catch (err) {
        if (err instanceof RosterError) return err;
        throw err;
      }
      throw new Error(`${name}: no error`);
    };
    expect(caught('nope')).toMatchObject({ code: 'unknown-template', status: 404 });
    expect(caught('bus-list')).toMatchObject({ code: 'invalid-template', status: 500 });
  });
});
