// The one gate, proved from the upstream schemas rather than from a list of fields: every string field of the
// session (with its result, location, teams and custom fields), team, location, activity and custom-field shapes
// is found by walking the zod schemas themselves, and each gets the name of a different student of the team,
// written in the forms that were seen to leak. The records go the way a pull takes them (zod, normalise, a real
// SQLite store); then every guardian output is read as families read it — team, activity and a teammate's feed
// and their landing pages over HTTP from the real web app, a family link of them, and the Google and Outlook
// event bodies of a family-visible push — and no form of any of those names may survive. A field added to a
// schema tomorrow is planted tomorrow: if any output prints it without the gate, this fails naming the field.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { loadProjectionContext, projectSession } from '../../src/calendar/index.ts';
import { foldWord } from '../../src/calendar/other-children-filter.ts';
import { FeedService } from '../../src/feeds/feed-service.ts';
import { FeedTokens } from '../../src/feeds/tokens.ts';
import { createMetrics } from '../../src/metrics.ts';
import { renderGoogleEvent } from '../../src/push/google/render.ts';
import { renderOutlookEvent } from '../../src/push/outlook/render.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import {
  indexCustomFields,
  normaliseActivity,
  normaliseCustomFieldsMetadata,
  normaliseLocation,
  normaliseSession,
  normaliseStudent,
  normaliseTeam,
} from '../../src/upstream/normalise.ts';
import {
  zActivity,
  zCustomFieldMeta,
  zLocation,
  zSession,
  zStudent,
  zTeam,
} from '../../src/upstream/schemas.ts';
import { createApp } from '../../src/web/app.ts';
import { type RunningServer, startServer } from '../../src/web/server.ts';

const SCHOOL = 'hill';
const NOW = new Date('2026-11-23T01:00:00.000Z');
const SECRET = Buffer.from('schema-gate-feed-secret-0123456789abcdef');
const TEAM = 3001;
const ACTIVITY = 21;
const OWN = 5001;

// ---- the schemas, walked -------------------------------------------------------------------------------------

type Path = (string | number)[];
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  entries?: Record<string, string>;
  values?: unknown[];
}
const defOf = (s: z.ZodType) => (s as unknown as { _zod: { def: Def } })._zod.def;
const PROBE = 'Probe text, With Capitals';

function unwrap(s: z.ZodType): z.ZodType {
  let node = s;
  for (let d = defOf(node); d.type === 'optional' || d.type === 'nullable'; d = defOf(node))
    node = d.innerType!;
  return node;
}

/** A leaf that takes any text and keeps it as it is: a string field (ids, instants, codes and flags are not). */
function isText(s: z.ZodType): boolean {
  const r = s.safeParse(PROBE);
  return r.success && r.data === PROBE;
}

/** Where a schema has string fields; a record's keys are the custom fields' (`keys`). */
function textPaths(schema: z.ZodType, keys: string[], at: Path = []): Path[] {
  const s = unwrap(schema);
  const d = defOf(s);
  if (d.type === 'object')
    return Object.entries(d.shape!).flatMap(([k, v]) => textPaths(v, keys, [...at, k]));
  if (d.type === 'array') return textPaths(d.element!, keys, [...at, 0]);
  if (d.type === 'record') return keys.flatMap((k) => textPaths(d.valueType!, keys, [...at, k]));
  return isText(s) ? [at] : [];
}

const CANDIDATES: unknown[] = [1, '2026-11-25T09:00:00.000Z', false, 'confirmed', 'W'];

/** A valid value with every field present (optional ones too): text as `text`, the rest the first that parses. */
function sample(schema: z.ZodType, keys: string[]): unknown {
  const s = unwrap(schema);
  const d = defOf(s);
  if (d.type === 'object')
    return Object.fromEntries(Object.entries(d.shape!).map(([k, v]) => [k, sample(v, keys)]));
  if (d.type === 'array') return [sample(d.element!, keys)];
  if (d.type === 'record') return Object.fromEntries(keys.map((k) => [k, sample(d.valueType!, keys)]));
  if (isText(s)) return 'Plain';
  if (d.type === 'enum') return Object.values(d.entries!)[0];
  if (d.type === 'literal') return d.values![0];
  const found = CANDIDATES.find((c) => s.safeParse(c).success);
  if (found === undefined) throw new Error(`no sample value for a ${d.type}`);
  return found;
}

function setAt(obj: unknown, p: Path, value: unknown): void {
  let o = obj as Record<string | number, unknown>;
  for (const k of p.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[p.at(-1)!] = value;
}

// ---- generated students and the forms of their names ----------------------------------------------------------

const SYLLABLES = ['zor', 'vek', 'quil', 'bran', 'dax', 'mir', 'tul', 'fen', 'gorv', 'lusk', 'pry', 'wend'];
interface Planted {
  id: number;
  first: string;
  last: string;
  /** Romanised (the student is written in Cyrillic upstream). */
  cyrillic?: { first: string; last: string };
}

function made(i: number): Planted {
  const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);
  const a = SYLLABLES[i % SYLLABLES.length]!;
  const b = SYLLABLES[Math.floor(i / SYLLABLES.length) % SYLLABLES.length]!;
  return { id: 6000 + i, first: cap(`${a}${b}o`), last: cap(`${b}${a}ski`) };
}

/** The forms that leaked before: middle name, joins, alone, look-alike, tag character, reversed, initial. */
function forms(p: Planted): string {
  const lookAlike = p.first.replace(/o/, '\u043E');
  const tagged = `${p.first.slice(0, 2)}\u{E0041}${p.first.slice(2)}`;
  const romanised = p.cyrillic ? `${p.cyrillic.first} ${p.cyrillic.last} helps; ` : '';
  return `${romanised}${p.first} James ${p.last} and ${p.first}-${p.last}; ${p.last.toUpperCase()}, ${p.first}; ${p.first}'s mum drives; the ${p.last}'s car; ${lookAlike} ${p.last}; ${tagged} ${p.last}; ${p.first[0]}. ${p.last}`;
}

/** The planted student's name parts found in the text, folded word by word (look-alikes and tags included). */
function survivors(text: string, p: Planted): string[] {
  const words = new Set(
    (text.normalize('NFC').match(/[\p{L}\p{M}\p{N}\u{E0000}-\u{E007F}'’-]+/gu) ?? []).flatMap((w) =>
      [w, ...w.split('-')].map(foldWord),
    ),
  );
  const parts = [p.first, p.last, ...(p.cyrillic ? [p.cyrillic.first, p.cyrillic.last] : [])];
  return parts.filter((x) => words.has(foldWord(x)));
}

// ---- the school, planted ----------------------------------------------------------------------------------------

const META_KEYS = ['lift', 'kit'];
interface Plant {
  shape: string;
  path: Path;
  student: Planted;
}

let store: Store;
let dir: string;
let server: RunningServer;
let tokens: FeedTokens;
let plants: Plant[];
let own: Planted;
const outputs: { what: string; text: string }[] = [];

async function http(p: string): Promise<string> {
  const res = await fetch(`${server.url}${p}`);
  expect(res.status, p).toBe(200);
  return (await res.text()).replace(/\r\n[ \t]/g, '').replace(/\\([,;\\])/g, '$1');
}

beforeAll(async () => {
  const shapes: Record<string, z.ZodType> = {
    session: zSession,
    team: zTeam,
    location: zLocation,
    activity: zActivity,
    customField: zCustomFieldMeta,
  };
  // A team's members are where names come from, not a place to plant them.
  const isRoster = (shape: string, p: Path) =>
    shape === 'team' &&
    p[0] === 'students' &&
    ['firstName', 'legalFirstName', 'lastName'].includes(String(p[2]));
  let n = 0;
  plants = Object.entries(shapes).flatMap(([shape, schema]) =>
    textPaths(schema, META_KEYS)
      .filter((p) => !isRoster(shape, p))
      .map((p) => ({ shape, path: p, student: made(n++) })),
  );
  // One student written in Cyrillic upstream, named in the text in Cyrillic and romanised.
  Object.assign(plants[0]!.student, {
    first: 'Саша',
    last: 'Шевченко',
    cyrillic: { first: 'Sasha', last: 'Shevchenko' },
  });
  own = { ...made(n++), id: OWN };

  const records = Object.fromEntries(
    Object.entries(shapes).map(([k, s]) => [k, sample(s, META_KEYS)]),
  ) as Record<string, Record<string, unknown>>;
  for (const p of plants) setAt(records[p.shape], p.path, forms(p.student));
  // The record's own facts: a scored fixture of the team, ahead, with a result, seen by guardians.
  Object.assign(records.session!, {
    id: 90001,
    startDateTime: '2026-11-25T09:00:00.000Z',
    endDateTime: '2026-11-25T10:00:00.000Z',
    scored: true,
    bye: false,
    cancelled: false,
    status: 'confirmed',
    result: 'W',
  });
  Object.assign(records.session!.activity as object, { id: ACTIVITY });
  Object.assign((records.session!.teams as object[])[0]!, { id: TEAM });
  (records.session!.students as object[]).splice(0, 1, { id: OWN, firstName: own.first, lastName: own.last });
  // The own child is named in the notes too: their own feed keeps it.
  records.session!.studentParentNotes = `${records.session!.studentParentNotes} ${own.first} ${own.last} leads.`;
  Object.assign(records.session!.locationData as object, { latitude: -33.8, longitude: 151.2 });
  Object.assign(records.team!, {
    id: TEAM,
    activity: { ...(records.team!.activity as object), id: ACTIVITY },
  });
  Object.assign(records.activity!, { id: ACTIVITY, archived: false });
  Object.assign(records.location!, { archived: false });
  Object.assign(records.customField!, {
    dataType: 'short-text',
    showToUserTypes: ['guardian', 'student', 'staff'],
  });

  // Students: every planted one and the feed's own child, members of the team (so a name alone counts).
  const people = [...plants.map((p) => p.student), own];
  const students = people.map((p) =>
    normaliseStudent(
      zStudent.parse({
        id: p.id,
        firstName: p.first,
        lastName: p.last,
      }),
      true,
    ),
  );
  const team = normaliseTeam(
    zTeam.parse({
      ...records.team,
      students: people.map((p, i) => ({
        studentId: p.id,
        firstName: p.first,
        lastName: p.last,
        sortOrder: i,
      })),
    }),
  );
  const meta = normaliseCustomFieldsMetadata(
    Object.fromEntries(META_KEYS.map((k) => [k, records.customField])),
  );
  expect(meta.bad).toEqual([]);
  const session = normaliseSession(zSession.parse(records.session), indexCustomFields(meta.fields));

  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-schema-gate-'));
  store = await openStore({ file: path.join(dir, 'rostercal.sqlite') });
  const at = NOW.toISOString();
  await store.records.upsertSchool({ id: SCHOOL, name: 'Hillcrest College', timeZone: 'Australia/Sydney' });
  await store.records.upsert(SCHOOL, 'students', students, at);
  await store.records.upsert(SCHOOL, 'teams', [team], at);
  await store.records.upsert(
    SCHOOL,
    'activities',
    [normaliseActivity(zActivity.parse(records.activity))],
    at,
  );
  await store.records.upsert(SCHOOL, 'locations', [normaliseLocation(zLocation.parse(records.location))], at);
  await store.records.upsert(SCHOOL, 'customFields', meta.fields, at);
  await store.records.upsert(SCHOOL, 'sessions', [session], at);

  const now = () => NOW;
  const feeds = new FeedService({ store, now, dataVersionTtlMs: 0 });
  tokens = new FeedTokens(store, SECRET, { now });
  const app = createApp({
    store,
    feeds,
    metrics: createMetrics({ defaultMetrics: false }),
    publicUrl: 'https://cal.example.org',
    logger: pino({ level: 'silent' }),
    feedRateLimit: false,
    now,
  });
  server = await startServer(app, { port: 0, host: '127.0.0.1' });

  // Every guardian output.
  const feedsToRead = {
    team: (await tokens.ensure(SCHOOL, 'team', TEAM)).token!,
    activity: (await tokens.ensure(SCHOOL, 'activity', ACTIVITY)).token!,
    'own child': (await tokens.ensure(SCHOOL, 'student', OWN)).token!,
  };
  for (const [what, token] of Object.entries(feedsToRead)) {
    outputs.push({ what: `${what} feed`, text: await http(`/feeds/${token}.ics`) });
    outputs.push({ what: `${what} page`, text: await http(`/feeds/${token}`) });
  }
  const made_ = await fetch(`${server.url}/family`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ links: Object.values(feedsToRead).join(' ') }).toString(),
  });
  expect(made_.status).toBe(303);
  const family = new URL(made_.headers.get('location')!).pathname;
  outputs.push({ what: 'family feed', text: await http(`${family}.ics`) });
  outputs.push({ what: 'family page', text: await http(family) });
  // What a family-visible push writes (Google and Outlook bodies), from the same projection.
  const ctx = await loadProjectionContext(store, SCHOOL);
  const stored = (await store.records.listSessions(SCHOOL, {}))[0]!;
  for (const scope of [
    { scope: 'team' as const, id: TEAM },
    { scope: 'student' as const, id: OWN },
  ]) {
    const ev = projectSession(stored, ctx, 'guardian', scope)!;
    const identity = {
      schoolId: SCHOOL,
      target: 't',
      calendarKey: `${scope.scope}:${scope.id}`,
      sessionId: ev.sessionId,
    };
    outputs.push({
      what: `google ${scope.scope}`,
      text: JSON.stringify(renderGoogleEvent(ev, identity, 'o').body),
    });
    outputs.push({
      what: `outlook ${scope.scope}`,
      text: JSON.stringify(renderOutlookEvent(ev, identity, 'o').body),
    });
  }
}, 60_000);

afterAll(async () => {
  await server?.close(1000);
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('every string field of the upstream shapes passes the one gate', () => {
  it('finds the string fields in the schemas themselves', () => {
    const where = (shape: string) => plants.filter((p) => p.shape === shape).map((p) => p.path.join('.'));
    // Fields that leaked before, among many others, are found without being named here.
    expect(where('session')).toEqual(
      expect.arrayContaining([
        'roundName',
        'organisationScore',
        'opponentScore',
        'studentParentNotes',
        'title',
      ]),
    );
    expect(where('session')).toEqual(
      expect.arrayContaining(['locationData.name', 'teams.0.name', 'customFieldsData.lift']),
    );
    expect(where('team')).toContain('name');
    expect(where('customField')).toContain('label');
    expect(plants.length).toBeGreaterThan(50);
  });

  it('the detector sees a planted name that is printed raw', () => {
    for (const p of plants.slice(0, 5)) expect(survivors(forms(p.student), p.student)).not.toEqual([]);
  });

  it('no form of another child’s name survives in any guardian output', () => {
    const leaks: string[] = [];
    for (const o of outputs) {
      for (const p of plants) {
        const found = survivors(o.text, p.student);
        if (found.length) leaks.push(`${p.shape}.${p.path.join('.')} → ${o.what}: ${found.join(', ')}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it('the feed’s own child keeps their name in their own feed, and the plants reach the outputs at all', () => {
    const ownFeed = outputs.find((o) => o.what === 'own child feed')!.text;
    expect(ownFeed).toContain(`${own.first} ${own.last}`);
    // The fixture's result and round name are printed (scrubbed): the planted fields are really shown.
    expect(ownFeed).toMatch(/Result: Won/);
    expect(ownFeed).toMatch(/Round: /);
    expect(ownFeed).toContain('(a student)');
  });
});
