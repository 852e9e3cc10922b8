// A round's name said once on the surfaces families read: the upstream names rounds "Round 11", and the wording
// "Round: {round}" made "Round: Round 11" (an outside tester). Read from outside: the team feed over HTTP and its
// landing page (sandbox → pull → store → web).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../feeds/harness.ts';

let h: Harness;
let base: string;
const SCHOOL = 'hill';

const readable = (ics: string) =>
  ics
    .replace(/\r\n[ \t]/g, '')
    .replace(/\\n/gi, '\n')
    .replace(/\\([,;\\])/g, '$1');

beforeAll(async () => {
  h = await startHarness();
  base = (await h.serve()).url;
});
afterAll(async () => {
  await h?.close();
});

describe('a round named "Round 11"', () => {
  it('reads "Round 11" once in the team feed and on its page, never "Round: Round"', async () => {
    const now = h.sandbox.now();
    const rounds = (await h.store.records.listSessions(SCHOOL, { from: now })).filter(
      (s) => s.roundName && /^Round \d+$/.test(s.roundName) && s.teams.length && s.status !== 'draft',
    );
    expect(rounds.length).toBeGreaterThan(0);
    const s = rounds[0]!;
    const token = (await h.tokens.ensure(SCHOOL, 'team', s.teams[0]!.id)).token!;
    const ics = readable(await (await fetch(`${base}/feeds/${token}.ics`)).text());
    expect(ics).toContain(s.roundName!);
    expect(ics).not.toMatch(/Round: Round/);
    const page = await (await fetch(`${base}/feeds/${token}`)).text();
    expect(page).not.toMatch(/Round: Round/);
  });
});
