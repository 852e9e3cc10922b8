// The upstream's clock decides what is new (issue 41). `rostercal serve` on its default schedule, against a sandbox
// whose clock is 5 minutes behind, then 5 minutes ahead of, the server's: an edit made upstream is in the
// activity's feed within a minute, and `status` and /admin name the skew. Before the fix the incremental cursor was
// the server's own run start less 120 s: with the server 5 minutes ahead it lay 3 minutes in the upstream's future
// and the edit never reached the feed (only a full pull, every 6 hours, brought it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { type Child, rostercal, runCli, stopped, writeServeConfig } from '../support/cli.ts';
import { weekSandboxOptions } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A sandbox whose clock runs `offsetMs` off the real one (the server's), its school built around this week. */
async function skewedSandbox(offsetMs: number): Promise<Sandbox> {
  const sandbox = await startSandbox(weekSandboxOptions({ seed: 21, scale: 'small' }));
  sandbox.setNow(new Date(Date.now() + offsetMs).toISOString());
  return sandbox;
}

/**
 * The next confirmed session from tomorrow: in its activity's feed, which families read. The week sandbox's school
 * has no holidays (support/clock.ts), so it is days away on any date; the 90 days only bound the search.
 */
function upcomingSession(sandbox: Sandbox) {
  const now = Date.parse(sandbox.now());
  const session = sandbox.school.sessions
    .filter(
      (s) => s.status === 'confirmed' && !s.cancelled && s.start > now + DAY && s.start < now + 90 * DAY,
    )
    .sort((a, b) => a.start - b.start)[0];
  if (!session) throw new Error('the sandbox school has no confirmed session in the coming 90 days');
  return session;
}

async function retitle(sandbox: Sandbox, id: number, title: string): Promise<void> {
  const email = sandbox.school.users.find((u) => u.email)!.email;
  const res = await fetch(`${sandbox.url}/sessions`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${sandbox.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email, reasonForChange: 'clock test', sessions: [{ id, title }] }),
  });
  expect(res.status, await res.text()).toBe(200);
}

describe.each([
  ['5 minutes behind', -5 * MINUTE, 'behind'],
  ['5 minutes ahead of', 5 * MINUTE, 'ahead of'],
])('an upstream whose clock is %s the server’s (rostercal serve)', (_name, offsetMs, word) => {
  let sandbox: Sandbox | undefined;
  let serve: Child | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    if (serve) await stopped(serve);
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('an edit upstream is in the feed within a minute; status and /admin name the skew', async () => {
    sandbox = await skewedSandbox(offsetMs);
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-clock-'));
    const port = await freePort();
    const config = writeServeConfig(path.join(dir, 'config.json'), {
      upstream: sandbox,
      port,
      dataDir: path.join(dir, 'data'),
      // The default incremental schedule.
      incremental: '*/30 * * * * *',
    });
    const env = { ROSTERCAL_CONFIG: config, ADMIN_TOKEN: 'admin-token-for-the-clock-test-0123456789' };
    serve = rostercal(['serve'], env);
    await serve.waitFor(/Stop with Ctrl-C/, 120_000);

    const session = upcomingSession(sandbox);
    const list = await runCli(['feeds', 'list', '--json'], env);
    expect(list.code, list.out).toBe(0);
    const feed = (JSON.parse(list.out) as { scope: string; id: number; url: string }[]).find(
      (f) => f.scope === 'activity' && f.id === session.activityId,
    );
    expect(feed, list.out).toBeDefined();
    const feedUrl = `http://127.0.0.1:${port}${new URL(feed!.url).pathname}`;
    const title = `Clock check ${offsetMs < 0 ? 'B' : 'A'}${session.id}`;
    expect(await (await fetch(feedUrl)).text()).not.toContain(title);

    // Just after a scheduled pull would be the worst moment before the fix; any moment shows it.
    await retitle(sandbox, session.id, title);
    const editedAt = Date.now();
    let tookMs: number | null = null;
    while (Date.now() - editedAt < 90_000) {
      const ics = await (await fetch(feedUrl)).text();
      if (ics.includes(title)) {
        tookMs = Date.now() - editedAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(tookMs, `the edit was not in the feed after 90 s\n${serve.output().slice(-3000)}`).not.toBeNull();
    expect(tookMs!).toBeLessThan(60_000);

    // The skew, measured on every pull: said by status and /admin (5 min, give or take the Date header's second).
    const said = new RegExp(`upstream's clock is (4 min 59 s|5 min|5 min 1 s) ${word} this server's`);
    const status = await runCli(['status'], env);
    expect(status.code, status.out).toBe(0);
    expect(status.out).toMatch(said);
    const admin = await fetch(`http://127.0.0.1:${port}/admin`, {
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expect(admin.status).toBe(200);
    expect((await admin.text()).replaceAll('&#39;', "'")).toMatch(said);
    // And the log: a warning on the pulls that measured it.
    expect(serve.output()).toMatch(said);
  }, 300_000);
});
