// Issue 27 on /admin: a job whose replica died mid-run reads `interrupted` (not `running` until its next fire),
// and a fire let pass reads `skipped`, with why — the same words `rostercal status` uses (describeJob).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import { type Harness, startHarness } from '../feeds/harness.ts';
import { type StaffSite, startStaffSite } from '../identity/harness.ts';
import { freePort } from '../support/ports.ts';

const ADMIN = 'admin-jobs-test-token-0123456789abcdef';

describe('/admin job status (issue 27)', () => {
  let h: Harness;
  let site: StaffSite;
  beforeAll(async () => {
    h = await startHarness({ now: '2026-11-02T09:00:00Z' });
    site = await startStaffSite(h, { port: await freePort(), idp: null, adminToken: ADMIN });
  });
  afterAll(async () => {
    await site?.close();
    await h?.close();
  });

  it('shows a dead replica’s job as interrupted and a skipped fire as skipped, with why', async () => {
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toISOString();
    // A replica on another machine that stopped beating a minute ago, in the middle of an incremental pull.
    const dead = { id: 'replica-b:41:abc123', host: 'replica-b', pid: 41, startedAt: at(-3_600_000) };
    await h.store.runs.beat(dead, at(-OWNER_SILENT_MS - 15_000));
    await h.store.runs.saveJobStatus({
      schoolId: h.school.id,
      job: 'incremental',
      lastStartedAt: at(-120_000),
      lastFinishedAt: at(-720_000),
      lastStatus: 'succeeded',
      lastError: null,
      nextRunAt: at(480_000),
      owner: dead.id,
    });
    await h.store.runs.saveJobStatus({
      schoolId: h.school.id,
      job: 'full',
      lastStartedAt: at(-7_200_000),
      lastFinishedAt: at(-7_100_000),
      lastStatus: 'succeeded',
      lastError: null,
      nextRunAt: at(3_600_000),
      lastSkippedAt: at(-60_000),
      lastSkipReason: 'overlap: the previous fire of this job is still running or waiting',
    });
    const res = await fetch(`${site.url}/admin`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).toBe(200);
    const text = (await res.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(text).toMatch(
      /incremental interrupted .* the process running it \(replica-b:41:abc123\) stopped before it finished/,
    );
    expect(text).toMatch(/full skipped .* skipped: overlap: the previous fire of this job is still running/);
    expect(text).not.toMatch(/incremental running/);
  });

  it('says when a job runs next in words that fit: seconds, minutes, hours or days, never "in 0 min"', async () => {
    const now = new Date(h.sandbox.now()).getTime(); // the site's clock
    const at = (ms: number) => new Date(now + ms).toISOString();
    const status = (job: string, next: number) =>
      h.store.runs.saveJobStatus({
        schoolId: h.school.id,
        job,
        lastStartedAt: at(-30_000),
        lastFinishedAt: at(-29_000),
        lastStatus: 'succeeded',
        lastError: null,
        nextRunAt: at(next),
        owner: null,
      });
    await status('incremental', 20_000);
    await status('full', 3 * 86_400_000 + 60_000);
    const res = await fetch(`${site.url}/admin`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const text = (await res.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(text).not.toContain('in 0 min');
    expect(text).toMatch(/incremental succeeded \d\d s ago in (1\d|20) s /);
    expect(text).toMatch(/full \w+ [^A-Z]* in 3 days /);
    // The calendars, counted in words a person says (was "59 children’s, 5 teams’, 4 activities’ and 12 staff calendars").
    expect(text).toMatch(
      /Calendars \d+ children, \d+ teams, \d+ activities and \d+ members of staff have a calendar each\./,
    );
  });
});
