// Event wording lives in templates/events/default.json; a school changes it without code in a directory of its own
// (config `eventTemplatesDir`, EVENT_TEMPLATES_DIR). Each template is a
// string with {placeholders}; the set of placeholders a template may use is fixed here, so a typo in a school's
// file is caught when it loads (naming the key), not rendered as literal braces in a parent's calendar.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const PLACEHOLDERS = {
  name: {
    activityAndTeam: ['activity', 'team'],
    teamOnly: ['activity', 'team'],
    noTeam: ['activity', 'title'],
    teamAndTitle: ['activity', 'team', 'title'],
  },
  title: {
    session: ['named', 'name', 'activity', 'team', 'title'],
    fixture: ['named', 'name', 'activity', 'team', 'title', 'opponent'],
    fixtureHome: ['named', 'name', 'activity', 'team', 'title', 'opponent'],
    fixtureAway: ['named', 'name', 'activity', 'team', 'title', 'opponent'],
    fixtureNamed: ['named', 'name', 'activity', 'team', 'title', 'opponent'],
    fixtureNamedHome: ['named', 'name', 'activity', 'team', 'title', 'opponent'],
    fixtureNamedAway: ['named', 'name', 'activity', 'team', 'title', 'opponent'],
    fixtureNoOpponent: ['named', 'name', 'activity', 'team', 'title'],
    bye: ['named', 'name', 'activity', 'team', 'title'],
    withResult: ['title', 'result'],
    unconfirmed: ['title'],
    draft: ['title'],
    cancelled: ['title'],
  },
  result: {
    win: ['us', 'them'],
    loss: ['us', 'them'],
    draw: ['us', 'them'],
    winNoScore: [],
    lossNoScore: [],
    drawNoScore: [],
    forfeit: ['us', 'them'],
    opponentForfeit: ['us', 'them'],
    noResult: [],
  },
  description: {
    cancelled: [],
    unconfirmed: [],
    draft: [],
    result: ['result'],
    round: ['round'],
    parentNotes: ['notes'],
    parentNotesForStaff: ['notes'],
    staffNotes: ['notes'],
    customField: ['label', 'value'],
    staff: ['names'],
    teams: ['names'],
    studentCount: ['count'],
    nameRemoved: [],
    locationRemoved: [],
    separator: [],
  },
} as const;

type Section = keyof typeof PLACEHOLDERS;
export type EventTemplates = {
  [S in Section]: { [K in keyof (typeof PLACEHOLDERS)[S]]: string };
};

function sectionSchema<S extends Section>(section: S, partial: boolean) {
  const shape: Record<string, z.ZodType<string>> = {};
  for (const [key, list] of Object.entries(PLACEHOLDERS[section])) {
    const allowed = list as readonly string[];
    shape[key] = z.string().superRefine((value, ctx) => {
      for (const m of value.matchAll(/\{([^{}]*)\}/g)) {
        const p = m[1] ?? '';
        if (!allowed.includes(p)) {
          ctx.addIssue({
            code: 'custom',
            message: `unknown placeholder {${p}}; allowed: ${allowed.length ? allowed.map((a) => `{${a}}`).join(', ') : 'none'}`,
          });
        }
      }
    });
  }
  const obj = z.object(shape).strict();
  return partial ? obj.partial() : obj;
}

function templatesSchema(partial: boolean) {
  const sections = Object.fromEntries(
    (Object.keys(PLACEHOLDERS) as Section[]).map((s) => [s, sectionSchema(s, partial)]),
  );
  const obj = z.object({ $comment: z.string().optional(), ...sections }).strict();
  return partial ? obj.partial() : obj;
}

/** The built-in wording, shipped with rostercal (templates/events/default.json). */
export const DEFAULT_TEMPLATE_DIR = fileURLToPath(new URL('../../templates/events/', import.meta.url));

/** A template file that cannot be used: names the file and, when the content is the problem, the key. */
export class EventTemplateError extends Error {
  readonly file: string;
  constructor(file: string, message: string) {
    super(`event templates ${file}: ${message}`);
    this.name = 'EventTemplateError';
    this.file = file;
  }
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new EventTemplateError(file, err instanceof Error ? err.message : String(err));
  }
}

function describe(file: string, error: z.ZodError): Error {
  const first = error.issues[0];
  const where = first?.path.join('.') || '(root)';
  return new EventTemplateError(file, `${where}: ${first?.message ?? 'invalid'}`);
}

type Merged = Record<string, Record<string, string>>;

function overlay(merged: Merged, file: string): void {
  if (!existsSync(file)) return;
  const over = templatesSchema(true).safeParse(readJson(file));
  if (!over.success) throw describe(file, over.error);
  for (const [section, values] of Object.entries(over.data)) {
    if (section === '$comment' || typeof values !== 'object' || values === null) continue;
    Object.assign(merged[section] ?? {}, values);
  }
}

/**
 * The wording for one school: the built-in `default.json`, then from the school's own directory `dir` (config
 * `eventTemplatesDir`, EVENT_TEMPLATES_DIR), when given, `default.json` (every school) and `<schoolId>.json` (that
 * school) over it. Each file there holds any subset of keys; a missing file changes nothing.
 * Throws EventTemplateError naming the file and key when a template is malformed.
 */
export function loadEventTemplates(opts: { dir?: string | null; schoolId?: string } = {}): EventTemplates {
  const baseFile = path.join(DEFAULT_TEMPLATE_DIR, 'default.json');
  const base = templatesSchema(false).safeParse(readJson(baseFile));
  if (!base.success) throw describe(baseFile, base.error);
  const merged = structuredClone(base.data) as unknown as Merged;
  if (opts.dir) {
    overlay(merged, path.join(opts.dir, 'default.json'));
    if (opts.schoolId !== undefined && /^[\w.-]+$/.test(opts.schoolId))
      overlay(merged, path.join(opts.dir, `${opts.schoolId}.json`));
  }
  delete merged.$comment;
  return merged as unknown as EventTemplates;
}

/** Replaces each {placeholder} with its value; placeholders were validated at load time. */
export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{([^{}]*)\}/g, (whole, key: string) => {
    const v = values[key];
    return v === undefined ? whole : String(v);
  });
}
