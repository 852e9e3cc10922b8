// "Can't make it" while the database is out of reach (an outside tester, stop 53): `rostercal serve` on PostgreSQL
// through a relay the test cuts. Before the fix the POST failed at the link's lookup, before any act, and got the
// generic "This calendar is temporarily unavailable" page: no form, what the family typed lost, and not a word on
// whether the absence was reported. Now: 503 with Retry-After, "nothing was reported" (true: nothing was looked
// up, recorded or sent), the form again with the reason as typed; once the database is back, sending that form
// reports the absence exactly once. The child's page meanwhile still answers, and says where its forms would be that
// reporting is unavailable just now; a `?done=` it cannot check is not asserted (before: every absence line and
// form silently gone, and "Reported" said from the URL alone).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { familyReportOf } from '../../src/domain/family-absence.ts';
import type { Id } from '../../src/domain/types.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { BANNER_WORDS, DONE_WORDS, UNAVAILABLE_NOTE } from '../../src/web/absence-done.ts';
import { type Child, rostercal, runRostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';
import { freePort } from '../support/ports.ts';
import { requestFrom } from '../support/proxy.ts';

let sandbox: Sandbox;
let db: TestDatabase;
let relay: PgWire;
let dir: string;
let base: string;
let env: Record<string, string>;
let serve: Child;

beforeAll(async () => {
  sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
  db = await createTestDatabase();
  relay = await startPgWire(db.url);
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-absence-outage-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const config = path.join(dir, 'rostercal.json');
  await writeFile(
    config,
    JSON.stringify({
      publicUrl: base,
      port,
      dataDir: dir,
      databaseUrl: relay.url,
      schools: [
        {
          id: 'hill',
          name: 'Hillcrest College',
          upstream: { url: sandbox.url, token: sandbox.token },
          timeZone: sandbox.school.timeZone,
          families: { reportAbsences: true },
        },
      ],
    }),
  );
  env = { ROSTERCAL_CONFIG: config, LOG_LEVEL: 'warn' };
  const synced = await runRostercal(['sync'], env);
  expect(synced.code, synced.stderr).toBe(0);
  serve = rostercal(['serve'], env);
  await serve.waitFor(/Stop with Ctrl-C/, 90_000);
}, 180_000);

afterAll(async () => {
  relay?.restore();
  if (serve && serve.proc.exitCode === null) serve.proc.kill('SIGTERM');
  await serve?.exit;
  await relay?.close();
  await db?.drop();
  await sandbox?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The family-made absences upstream for the child, by session's start. */
async function reportedUpstream(studentId: Id): Promise<number> {
  const upstream = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
  let n = 0;
  for await (const page of upstream.preExplainedAbsences({ studentIds: [studentId] }))
    for (const a of page.records) if (familyReportOf(a)) n++;
  return n;
}

interface ChildForm {
  id: Id;
  at: string;
  cookie: string;
  csrf: string;
  sessions: string[];
}

/** A child whose page offers "Can't make it?" for two sessions or more, and the form as a browser holds it. */
async function childForm(): Promise<ChildForm> {
  const list = await runRostercal(['feeds', 'list', '--json'], env);
  expect(list.code, list.stderr).toBe(0);
  const students = (JSON.parse(list.stdout) as FeedListing[]).filter((f) => f.scope === 'student' && f.page);
  for (const f of students) {
    const at = new URL(f.page!).pathname;
    const res = await requestFrom('127.0.0.1', `${base}${at}`);
    const sessions = [...res.body.matchAll(/name="session" value="(\d+)"/g)].map((m) => m[1]!);
    if (res.status !== 200 || sessions.length < 2) continue;
    const cookie = ([] as string[])
      .concat(res.headers['set-cookie'] ?? [])
      .map((c) => c.split(';')[0]!)
      .find((c) => c.startsWith('rostercal_form='))!;
    return { id: f.id, at, cookie, csrf: /name="csrf" value="([^"]+)"/.exec(res.body)![1]!, sessions };
  }
  throw new Error('no child of the school has a page offering "Can’t make it?" for two sessions');
}

let form: Promise<ChildForm> | undefined;
const post = async (fields: Record<string, string>) => {
  const f = await form!;
  return requestFrom('127.0.0.1', `${base}${f.at}/absences`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: f.cookie },
    body: new URLSearchParams(fields).toString(),
  });
};

describe('a report while the database is out of reach', () => {
  it('says nothing was reported and gives the form back as typed; sent again once it is back, it is reported once', async () => {
    form = childForm();
    const f = { ...(await form), session: (await form).sessions[0]! };
    const reason = 'Dentist at 4 & "orthodontist" <after>';
    const fields = { csrf: f.csrf, session: f.session, student: String(f.id), reason };

    relay.cut();
    const failed = await post(fields);
    expect(failed.status, failed.body).toBe(503);
    expect(failed.headers['retry-after']).toBeDefined();
    expect(failed.body).toMatch(/nothing was reported/);
    expect(failed.body).toContain(`action="${base}${f.at}/absences"`);
    expect(failed.body).toContain('value="Dentist at 4 &amp; &quot;orthodontist&quot; &lt;after&gt;"');
    expect(failed.body).toContain(`name="session" value="${f.session}"`);
    expect(failed.body).toContain(`name="student" value="${f.id}"`);
    expect(await reportedUpstream(f.id)).toBe(0);

    relay.restore();
    // The form as given back, sent once the database answers again (the store may take a moment to find it back).
    const again = {
      csrf: /name="csrf" value="([^"]+)"/.exec(failed.body)![1]!,
      session: /name="session" value="(\d+)"/.exec(failed.body)![1]!,
      student: /name="student" value="(\d+)"/.exec(failed.body)![1]!,
      reason: reason,
    };
    let sent = await post(again);
    for (let i = 0; sent.status === 503 && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      sent = await post(again);
    }
    expect(sent.status, sent.body).toBe(303);
    expect(await reportedUpstream(f.id)).toBe(1);
  });

  it('gone after the link was found, before the report was recorded, it still says nothing was reported', async () => {
    const f = await form!;
    // The link is found; the report's read of the child's sessions finds the database gone.
    relay.cutOn(/^select .* from "sessions" as "s" where/i);
    const lost = await post({ csrf: f.csrf, session: f.sessions[1]!, student: String(f.id), reason: 'Flu' });
    relay.restore();
    expect(lost.status, lost.body).toBe(503);
    expect(lost.body).toContain('<h1>The absence was not reported</h1>');
    expect(lost.body).toMatch(/nothing was reported/);
    expect(lost.body).toContain('value="Flu"');
    expect(await reportedUpstream(f.id)).toBe(1);
  });

  it('an undo whose store goes away after the link was found says the absence still stands; sent again, it is undone', async () => {
    const f = await form!;
    const page = await requestFrom('127.0.0.1', `${base}${f.at}`, { headers: { cookie: f.cookie } });
    const undo = /<form method="post" action="[^"]+\/absences\/undo">.*?name="absence" value="(\d+)"/s.exec(
      page.body,
    );
    expect(undo, 'the page offers Undo for the report made above').not.toBeNull();
    const fields = { csrf: f.csrf, absence: undo![1]! };
    const postUndo = () =>
      requestFrom('127.0.0.1', `${base}${f.at}/absences/undo`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: f.cookie },
        body: new URLSearchParams(fields).toString(),
      });
    // The link is found; the undo's read of the absence finds the database gone (was: the generic 503 page).
    relay.cutOn(/^select .* from "absences" where "school_id" = \$1 and "id" = \$2/i);
    const lost = await postUndo();
    relay.restore();
    expect(lost.status, lost.body).toBe(503);
    expect(lost.body).toContain('<h1>The absence was not undone</h1>');
    expect(lost.body).toMatch(/the absence still stands/);
    expect(await reportedUpstream(f.id)).toBe(1);
    let sent = await postUndo();
    for (let i = 0; sent.status === 503 && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 500));
      sent = await postUndo();
    }
    expect(sent.status, sent.body).toBe(303);
    expect(await reportedUpstream(f.id)).toBe(0);
  });
});

describe('the child’s page while the database is out of reach', () => {
  it('says reporting is unavailable just now, and that what was done could not be checked, not what the URL claims', async () => {
    const f = await form!;
    const reported = f.sessions[0]!;
    relay.cut();
    try {
      const page = await requestFrom('127.0.0.1', `${base}${f.at}?done=reported&session=${reported}`);
      expect(page.status).toBe(200);
      expect(page.body).toContain(UNAVAILABLE_NOTE);
      // In the session's block, where its form (or its "Reported … Undo") would be.
      const block = page.body.split(`id="session-${reported}"`)[1]!.split('</li>')[0]!;
      expect(block).toContain(UNAVAILABLE_NOTE);
      expect(block).toContain(BANNER_WORDS['unchecked-report']);
      expect(page.body).not.toContain(DONE_WORDS.reported);
      const undone = await requestFrom('127.0.0.1', `${base}${f.at}?done=withdrawn&session=${reported}`);
      expect(undone.body).toContain(BANNER_WORDS['unchecked-undo']);
      expect(undone.body).not.toContain(DONE_WORDS.withdrawn);
    } finally {
      relay.restore();
    }
  });
});
