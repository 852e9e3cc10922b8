// What the absence tests (absence-form, absence-links, absence-router) read off a calendar page and post back: its
// "Can't make it?" form with the form cookie the page set, as a browser without script would use them.
import { afterAll, beforeAll } from 'vitest';
import type { RunningServer } from '../../src/web/server.ts';
import { familyAbsences, type Harness, type HttpAnswer, httpCall, startHarness } from '../feeds/harness.ts';

export const PUBLIC = 'https://cal.example.org';

export interface AbsenceForm {
  page: HttpAnswer;
  /** The form cookie's value: the one the page set, or the one sent. */
  cookie: string;
  csrf: string;
  /** Where the form posts, on PUBLIC. */
  action: string;
  session: string;
  student: string;
}

/** The form cookie a response set, if any. */
export function formCookieSet(res: HttpAnswer): string | undefined {
  const set = res.headers['set-cookie'] ?? [];
  return set.find((c) => c.startsWith('rostercal_form='));
}

/** The page at `url` (on `server`) and its first "Can't make it?" form, or null when it offers none. */
export async function absenceForm(server: string, url: string, cookie?: string): Promise<AbsenceForm | null> {
  const page = await httpCall(
    url.replace(PUBLIC, server),
    cookie ? { headers: { cookie: `rostercal_form=${cookie}` } } : {},
  );
  const form = /<form method="post" action="([^"]+\/absences)">(.*?)<\/form>/s.exec(page.text);
  if (!form) return null;
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(form[2]!)?.[1] ?? '';
  const set = formCookieSet(page);
  return {
    page,
    cookie: set ? set.slice('rostercal_form='.length).split(';')[0]! : cookie!,
    csrf: field('csrf'),
    action: form[1]!,
    session: field('session'),
    student: field('student'),
  };
}

/** A post of `fields` to `action` (on PUBLIC) with the form cookie and any other headers, as a browser's form. */
export function postForm(
  server: string,
  action: string,
  cookie: string | null,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return httpCall(action.replace(PUBLIC, server), {
    form: fields,
    headers: { ...(cookie !== null ? { cookie: `rostercal_form=${cookie}` } : {}), ...headers },
  });
}

/** A current child of the school whose own calendar page offers "Can't make it?": their id, token and form. */
export async function childWithForm(h: Harness, server: string, skip: readonly number[] = []) {
  for (const s of await h.store.records.list('hill', 'students')) {
    if (!s.current || skip.includes(s.id)) continue;
    const token = (await h.tokens.ensure('hill', 'student', s.id)).token!;
    const form = await absenceForm(server, `${PUBLIC}/feeds/${token}`);
    if (form) return { student: s, token, form };
  }
  throw new Error('no child of the generated school has a calendar page offering "Can\u2019t make it?"');
}

/**
 * The sandbox's school (seed 31) pulled into a harness, and the real app serving it with families' "Can't make it?"
 * on: started before the file's tests, closed after them. Read `h` and `server` inside tests (they are set then).
 */
export function absenceServer(): { h: Harness; server: RunningServer } {
  const world = {} as { h: Harness; server: RunningServer };
  beforeAll(async () => {
    world.h = await startHarness({ seed: 31 });
    world.server = await world.h.serve({ publicUrl: PUBLIC, absences: familyAbsences(world.h) });
  }, 120_000);
  afterAll(() => world.h?.close());
  return world;
}
