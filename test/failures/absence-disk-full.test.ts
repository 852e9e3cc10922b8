// "Can't make it" on a full disk (issue 40): DATA_DIR on a real 48 MB tmpfs, filled to the last byte with
// fallocate while `rostercal serve` runs. Tried from outside before the fix: the absence was created upstream, the
// family read "Reported", the same page still offered "Can't make it?" for it, and no audit record was written.
// Now an act that cannot be recorded is not sent: the family is told nothing was reported, the upstream holds
// nothing, and the page offers the report as before. The filesystem is unmounted whatever happens.
import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FeedListing } from '../../src/cli/feeds.ts';
import { familyReportOf } from '../../src/domain/family-absence.ts';
import type { Id } from '../../src/domain/types.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { UpstreamClient } from '../../src/upstream/api.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { rostercal, runRostercal, stopped } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';
import { requestFrom } from '../support/proxy.ts';
import { mountTmpfs, type Tmpfs } from '../support/tmpfs.ts';

let sandbox: Sandbox;
let upstream: UpstreamClient;
let disk: Tmpfs;
let dir: string;
let data: string;

beforeAll(async () => {
  disk = await mountTmpfs('absence-fulldisk');
  ({ dir, data } = disk);
  sandbox = await startWeekSandbox({ seed: 5, scale: 'small' });
  upstream = createUpstreamClient({ baseUrl: sandbox.url, token: sandbox.token });
}, 60_000);

afterAll(async () => {
  await sandbox?.close();
  await disk?.close();
});

async function reportedUpstream(studentId: Id): Promise<number> {
  let n = 0;
  for await (const page of upstream.preExplainedAbsences({ studentIds: [studentId] }))
    for (const a of page.records) if (familyReportOf(a)) n++;
  return n;
}

describe('a report while the disk is full', () => {
  it('is not sent, says nothing was reported, and the page still offers it', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const config = path.join(dir, 'rostercal.json');
    await writeFile(
      config,
      JSON.stringify({
        publicUrl: base,
        port,
        dataDir: data,
        schools: [
          {
            id: 'hill',
            name: 'Hillcrest College',
            upstream: { url: sandbox.url, token: sandbox.token },
            timeZone: sandbox.school.timeZone,
            // Room for several recorded reports: each one that still fits is sent, and the next is tried.
            families: { reportAbsences: true, reportsPerChildPerDay: 20 },
          },
        ],
      }),
    );
    const env = { ROSTERCAL_CONFIG: config, LOG_LEVEL: 'info' };
    const synced = await runRostercal(['sync'], env);
    expect(synced.code, synced.stderr).toBe(0);
    const list = await runRostercal(['feeds', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    const students = (JSON.parse(list.stdout) as FeedListing[]).filter(
      (f) => f.scope === 'student' && f.page,
    );
    const serve = rostercal(['serve'], env);
    try {
      await serve.waitFor(/Stop with Ctrl-C/, 90_000);
      // A child whose page offers a report, and the form as a browser holds it.
      let page: { id: Id; at: string; cookie: string; csrf: string; sessions: string[] } | null = null;
      for (const f of students) {
        const at = new URL(f.page!).pathname;
        const res = await requestFrom('127.0.0.1', `${base}${at}`);
        const sessions = [...res.body.matchAll(/name="session" value="(\d+)"/g)].map((m) => m[1]!);
        if (res.status !== 200 || sessions.length === 0) continue;
        const cookie = ([] as string[])
          .concat(res.headers['set-cookie'] ?? [])
          .map((c) => c.split(';')[0]!)
          .find((c) => c.startsWith('rostercal_form='))!;
        page = { id: f.id, at, cookie, csrf: /name="csrf" value="([^"]+)"/.exec(res.body)![1]!, sessions };
        break;
      }
      expect(page, 'a child whose page offers "Can’t make it?"').not.toBeNull();
      const p = page!;
      const post = (csrf: string, session: string) =>
        requestFrom('127.0.0.1', `${base}${p.at}/absences`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: p.cookie },
          body: new URLSearchParams({ csrf, session, student: String(p.id) }).toString(),
        });
      const auditFailures = () => serve.output().match(/an absence act could not be audited/g)?.length ?? 0;

      // Fill the filesystem to the last byte, then push SQLite past the space its files already hold.
      disk.fillOnce();
      const wal = Number(
        execFileSync('stat', ['-c', '%s', path.join(data, 'rostercal.sqlite-wal')], { encoding: 'utf8' }),
      );
      // SQLite writes into the space its WAL already holds until that is used up, and a checkpoint can hand that
      // space back: so "full" comes and goes. Each round uses the space up with forms that fail their check
      // (refused and audited, a write each) until the store refuses an audit record, then tries a real report. A
      // report the store could still record is sent and shown; the first it could not record must not be sent.
      let sent = 0;
      let recorded = 0;
      let refusedForSpace = false;
      for (const session of p.sessions) {
        const before = auditFailures();
        while (auditFailures() === before && sent < 40_000)
          await Promise.all(
            Array.from({ length: 16 }, () => {
              sent++;
              return post('x'.repeat(p.csrf.length), session);
            }),
          );
        const res = await post(p.csrf, session);
        const held = await reportedUpstream(p.id);
        const after = (await requestFrom('127.0.0.1', `${base}${p.at}`)).body;
        const block = after.split(`id="session-${session}"`)[1]?.split('</li>')[0] ?? '';
        console.info(
          `full disk: ${sent} refused forms so far (WAL ${wal} bytes); session ${session} answered ${res.status}; ${held} absence(s) upstream; the page ${block.includes('Reported') ? 'shows "Reported"' : 'shows no report'}${block.includes('Can’t make it?') ? ' and offers "Can’t make it?"' : ''}`,
        );
        if (res.status === 303) {
          // The store still had room for the act: then it is recorded, sent, and shown as reported.
          recorded++;
          expect(held).toBe(recorded);
          expect(block).toContain('Reported');
          expect(block).not.toContain('Can’t make it?');
          continue;
        }
        expect(res.status, serve.output().slice(-3000)).toBe(503);
        expect(res.body).toContain('could not record the report');
        expect(res.body).toContain('nothing was reported');
        expect(held).toBe(recorded);
        expect(block).not.toContain('Reported');
        expect(block).toContain('Can’t make it?');
        refusedForSpace = true;
        break;
      }
      // The disk was full for the store at least once (else this test proved only the easy half).
      expect(refusedForSpace, `no report was refused for space in ${p.sessions.length} tries`).toBe(true);
    } finally {
      await stopped(serve);
    }
  }, 300_000);
});
