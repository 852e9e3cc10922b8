// Roster templates: declarative JSON files validated with zod. The shipped ones live in templates/rosters/; a school
// adds its own (or overrides a shipped one by name) in a directory named by ROSTER_TEMPLATES_DIR or an option.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

export const BUILTIN_TEMPLATES_DIR = fileURLToPath(new URL('../../templates/rosters/', import.meta.url));

export const headerFacts = [
  'school',
  'activity',
  'team',
  'category',
  'coaches',
  'session',
  'date',
  'time',
  'location',
  'address',
  'opponent',
  'meetingTime',
  /** What the team's families are told of the session (meet time, uniform, transport): one line each. */
  'toldFamilies',
  'round',
  'players',
] as const;
export type HeaderFact = (typeof headerFacts)[number];

/** Facts that only exist for a session. */
const sessionFacts: ReadonlySet<HeaderFact> = new Set([
  'session',
  'date',
  'time',
  'location',
  'address',
  'opponent',
  'meetingTime',
  'toldFamilies',
  'round',
]);

export const columnFields = [
  'number',
  'jersey',
  'preferredName',
  'legalName',
  'firstName',
  'lastName',
  'yearGroup',
  'position',
  'captain',
  'boarder',
  'studentId',
  'absence',
  'present',
  'absent',
  'signature',
  'notes',
  'medical',
  'guardianContact',
] as const;
export type ColumnField = (typeof columnFields)[number];

export const sortKeys = [
  'teamOrder',
  'jersey',
  'lastName',
  'firstName',
  'yearGroup',
  'position',
  'captainFirst',
] as const;
export type SortKey = (typeof sortKeys)[number];

export const sections = ['result', 'notes', 'signoff'] as const;

/** Default label and width (fixed points, or a flex share of what is left) of each column. */
export const columnDefaults: Record<ColumnField, { label: string; width?: number; flex?: number }> = {
  number: { label: '#', width: 22 },
  jersey: { label: 'No.', width: 30 },
  preferredName: { label: 'Name', flex: 3 },
  legalName: { label: 'Legal name', flex: 3 },
  firstName: { label: 'First name', flex: 2 },
  lastName: { label: 'Last name', flex: 2 },
  yearGroup: { label: 'Year', width: 56 },
  position: { label: 'Position', flex: 1.6 },
  captain: { label: 'Captain', width: 46 },
  boarder: { label: 'Boarder', width: 46 },
  studentId: { label: 'Student ID', width: 64 },
  absence: { label: 'Pre-explained absence', flex: 2.5 },
  present: { label: 'Present', width: 44 },
  absent: { label: 'Absent', width: 44 },
  signature: { label: 'Signature', flex: 1.8 },
  notes: { label: 'Notes', flex: 2 },
  medical: { label: 'Medical', flex: 2.2 },
  guardianContact: { label: 'Guardian contact', flex: 3 },
};

const pageSizes = ['A4', 'A3', 'A5', 'LETTER', 'LEGAL'] as const;
/** Page sizes in points, portrait. */
export const pageDimensions: Record<(typeof pageSizes)[number], [number, number]> = {
  A4: [595.28, 841.89],
  A3: [841.89, 1190.55],
  A5: [419.53, 595.28],
  LETTER: [612, 792],
  LEGAL: [612, 1008],
};

const columnSchema = z.strictObject({
  field: z.enum(columnFields),
  label: z.string().max(60).optional(),
  width: z.number().min(12).max(800).optional(),
  flex: z.number().positive().max(20).optional(),
  align: z.enum(['left', 'center', 'right']).optional(),
});

const headerItemSchema = z.union([
  z.enum(headerFacts),
  z.strictObject({
    customField: z.string().min(1),
    label: z.string().max(60).optional(),
  }),
]);

export const templateSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case letters, digits and dashes, starting with a letter or digit'),
  title: z.string().min(1).max(120),
  description: z.string().max(500).optional(),
  page: z
    .strictObject({
      size: z.enum(pageSizes).default('A4'),
      orientation: z.enum(['portrait', 'landscape']).default('portrait'),
      margin: z.number().min(18).max(90).default(36),
    })
    .prefault({}),
  /** Whether the roster is for one session: none, optional, required, or required and a fixture. */
  session: z.enum(['none', 'optional', 'required', 'fixture']).default('none'),
  header: z.array(headerItemSchema).default(['school', 'activity', 'team', 'category', 'coaches']),
  columns: z.array(columnSchema).min(1),
  sort: z.array(z.enum(sortKeys)).default(['teamOrder', 'lastName', 'firstName']),
  blankRows: z.int().min(0).max(100).default(0),
  fontSize: z.number().min(6).max(14).default(9.5),
  /** Smallest row height in points (room to write by hand). */
  rowHeight: z.number().min(10).max(80).optional(),
  zebra: z.boolean().default(true),
  /**
   * A discreet mark beside the name of a student with a medical condition (no detail: the medical sheet has it),
   * printed only for a viewer allowed sensitive rosters at a school that keeps them.
   */
  medicalMarker: z.boolean().default(false),
  /** Blocks printed after the table: space for the result, ruled notes, roll sign-off. */
  after: z.array(z.enum(sections)).default([]),
  footer: z.string().max(300).optional(),
  /** BCP 47 locale for dates and sorting. */
  locale: z.string().default('en-GB'),
});

export type RosterTemplate = z.infer<typeof templateSchema>;
export type TemplateColumn = z.infer<typeof columnSchema>;

export class TemplateError extends Error {
  override name = 'TemplateError';
}

/** No template of that name (a request's mistake, 404), as opposed to a template that exists but is invalid. */
export class UnknownTemplateError extends TemplateError {
  override name = 'UnknownTemplateError';
  constructor(name: string, available: string[]) {
    super(`unknown roster template "${name}"; available: ${available.join(', ')}`);
  }
}

function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out || '(top level)';
}

/** Rules zod's shape cannot say: privacy in the name, session facts, and what fits on the page. */
function checkRules(t: RosterTemplate, file: string): string[] {
  const problems: string[] = [];
  const fields = new Set(t.columns.map((c) => c.field));
  const says = (re: RegExp) => re.test(t.name) || re.test(t.title);
  if (fields.has('medical') && !says(/medical/i)) {
    const i = t.columns.findIndex((c) => c.field === 'medical');
    problems.push(
      `columns[${i}].field: the template prints medical data, so its name or title must say so (include the word "medical")`,
    );
  }
  if (fields.has('guardianContact') && !says(/guardian|contact/i)) {
    const i = t.columns.findIndex((c) => c.field === 'guardianContact');
    problems.push(
      `columns[${i}].field: the template prints guardian contact data, so its name or title must say so (include "guardian" or "contact")`,
    );
  }
  if (t.session === 'none') {
    const i = t.columns.findIndex((c) => c.field === 'absence');
    if (i >= 0)
      problems.push(`columns[${i}].field: "absence" needs a session; set "session" to optional or required`);
    t.header.forEach((h, j) => {
      if (typeof h === 'string' && sessionFacts.has(h)) {
        problems.push(
          `header[${j}]: "${h}" is a session fact; set "session" to optional, required or fixture`,
        );
      }
    });
  }
  const [w, h] = pageDimensions[t.page.size];
  const pageWidth = t.page.orientation === 'landscape' ? h : w;
  const available = pageWidth - 2 * t.page.margin;
  let fixed = 0;
  let flexCount = 0;
  for (const c of t.columns) {
    const d = columnDefaults[c.field];
    if (c.width !== undefined) fixed += c.width;
    else if (c.flex !== undefined || d.flex !== undefined) flexCount++;
    else fixed += d.width ?? 0;
  }
  if (fixed + flexCount * 30 > available) {
    problems.push(
      `columns: the columns need ${Math.round(fixed + flexCount * 30)} pt but the page has ${Math.round(available)} pt between its margins; remove columns, narrow them, or use landscape`,
    );
  }
  const expected = basename(file).replace(/\.json$/, '');
  if (t.name !== expected) problems.push(`name: "${t.name}" must match the file name "${expected}.json"`);
  return problems;
}

/** Parses and validates a template's JSON text; errors name the file and each bad field. */
export function parseTemplate(text: string, file: string): RosterTemplate {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TemplateError(`${file}: not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const result = templateSchema.safeParse(json);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${pathOf(i.path)}: ${i.message}`);
    throw new TemplateError(`${file}: invalid roster template\n${lines.join('\n')}`);
  }
  const problems = checkRules(result.data, file);
  if (problems.length > 0) {
    throw new TemplateError(`${file}: invalid roster template\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
  return result.data;
}

export interface TemplateSource {
  /** The school's own templates (configuration: ROSTER_TEMPLATES_DIR); override shipped ones of the same name. */
  dir?: string | null;
}

function customDir(source: TemplateSource): string | null {
  const dir = source.dir;
  return dir ? resolve(dir) : null;
}

const cache = new Map<string, { mtimeMs: number; size: number; template: RosterTemplate }>();

function loadFile(file: string): RosterTemplate {
  const st = statSync(file);
  const hit = cache.get(file);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.template;
  const template = parseTemplate(readFileSync(file, 'utf8'), file);
  cache.set(file, { mtimeMs: st.mtimeMs, size: st.size, template });
  return template;
}

function jsonFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new TemplateError(`roster templates directory ${dir} does not exist`);
    }
    throw err;
  }
}

/** Names of every available template (shipped and the school's), sorted. */
export function templateNames(source: TemplateSource = {}): string[] {
  const names = new Set(jsonFiles(BUILTIN_TEMPLATES_DIR).map((f) => f.slice(0, -5)));
  const dir = customDir(source);
  if (dir) for (const f of jsonFiles(dir)) names.add(f.slice(0, -5));
  return [...names].sort();
}

/** Loads one template by name: the school's directory first, then the shipped ones. */
export function loadTemplate(name: string, source: TemplateSource = {}): RosterTemplate {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(name)) {
    throw new UnknownTemplateError(name, templateNames(source));
  }
  const dir = customDir(source);
  for (const d of dir ? [dir, BUILTIN_TEMPLATES_DIR] : [BUILTIN_TEMPLATES_DIR]) {
    const file = join(d, `${name}.json`);
    let exists = false;
    try {
      exists = statSync(file).isFile();
    } catch {
      exists = false;
    }
    if (exists) return loadFile(file);
  }
  throw new UnknownTemplateError(name, templateNames(source));
}

/** Loads every template, collecting the invalid ones' errors instead of stopping at the first. */
export function loadAllTemplates(source: TemplateSource = {}): {
  templates: RosterTemplate[];
  errors: string[];
} {
  const templates: RosterTemplate[] = [];
  const errors: string[] = [];
  for (const name of templateNames(source)) {
    try {
      templates.push(loadTemplate(name, source));
    } catch (err) {
      errors.push(err instanceof Error ? err.message : String(err));
    }
  }
  return { templates, errors };
}
