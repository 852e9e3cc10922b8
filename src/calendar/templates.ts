// Event wording lives in templates/events/*.json so a school can change it without code. Each template is a
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

export const DEFAULT_TEMPLATE_DIR = fileURLToPath(new URL('../../templates/events/', import.meta.url));

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`event templates ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function describe(file: string, error: z.ZodError): Error {
  const first = error.issues[0];
  const where = first?.path.join('.') || '(root)';
  return new Error(`event templates ${file}: ${where}: ${first?.message ?? 'invalid'}`);
}

/**
 * Loads `default.json` from dir and, when present, `<schoolId>.json` over it (any subset of keys).
 * Throws with the file and key when a template is malformed.
 */
export function loadEventTemplates(opts: { dir?: string; schoolId?: string } = {}): EventTemplates {
  const dir = opts.dir ?? DEFAULT_TEMPLATE_DIR;
  const baseFile = path.join(dir, 'default.json');
  const base = templatesSchema(false).safeParse(readJson(baseFile));
  if (!base.success) throw describe(baseFile, base.error);
  const merged = structuredClone(base.data) as unknown as Record<string, Record<string, string>>;
  if (opts.schoolId !== undefined && /^[\w.-]+$/.test(opts.schoolId)) {
    const schoolFile = path.join(dir, `${opts.schoolId}.json`);
    if (existsSync(schoolFile)) {
      const over = templatesSchema(true).safeParse(readJson(schoolFile));
      if (!over.success) throw describe(schoolFile, over.error);
      for (const [section, values] of Object.entries(over.data)) {
        if (section === '$comment' || typeof values !== 'object' || values === null) continue;
        Object.assign(merged[section] ?? {}, values);
      }
    }
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
