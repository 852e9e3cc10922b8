// Pushes that `serve`'s scheduler starts (on the real clock: the scheduler and the push window are about now), against the Google and Graph fakes injecting faults: the real
// `rostercal serve` (a child process) over a store already pulled, with no pull due and a push schedule firing
// every two seconds. Refused credentials or permission (401, 403) fail the run and the job, naming the target and
// the status; throttling (429) and server errors (5xx) are waited out and retried, and the push completes without
// a duplicate: the remote holds exactly the events the run created, and the next fire (faults cleared) finds
// nothing to create or delete. Each step waits for the service's own log line ("push finished"), never a clock.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { JobStatus, SyncRun } from '../../src/store/types.ts';
import type { FaultRule } from '../fakes/common.ts';
import type { FakeGoogle } from '../fakes/google-calendar.ts';
import type { FakeGraph } from '../fakes/graph.ts';
import { rostercal, writeSchoolConfig } from '../support/cli.ts';
import { freePort } from '../support/ports.ts';
import { type PushWorld, startPushWorld } from '../support/push-world.ts';

type Provider = 'outlook' | 'google';
const backoff = { baseMs: 20, capMs: 100, maxRetries: 10 };
const NEVER = '0 0 1 1 *';
const PUSH_FINISHED = /"msg":"push finished"/;
const TWO_PUSHES_FINISHED = /"msg":"push finished"[\s\S]*"msg":"push finished"/;

describe('scheduled pushes inside serve, against faulty providers', () => {
  let world: PushWorld;
  let graph: FakeGraph;
  let google: FakeGoogle;
  let root: string;
  let pulled: string;
  let n = 0;

  /** `targetId`: a fresh one per test, so no test adopts the calendars and events of another. */
  function config(dataDir: string, provider: Provider | null, targetId = ''): string {
    const targets =
      provider === 'outlook'
        ? [
            {
              id: targetId,
              provider: 'outlook',
              scope: 'staff',
              outlook: { baseUrl: graph.url, accessToken: 'env:GRAPH_TOKEN', backoff },
            },
          ]
        : provider === 'google'
          ? [
              {
                id: targetId,
                provider: 'google',
                scope: 'team',
                google: {
                  rootUrl: google.url,
                  auth: { accessToken: 'env:GOOGLE_TOKEN' },
                  backoff,
                  writesPerSecond: 200,
                },
              },
            ]
          : [];
    return writeSchoolConfig(root, world.sandbox.url, targets, {
      file: join(root, `config-${n++}.json`),
      extra: { dataDir, publicUrl: 'https://calendars.hill.example' },
      // No pull falls due during a test; the push fires every two seconds.
      school: { schedules: { incremental: NEVER, full: NEVER, push: '*/2 * * * * *' } },
    });
  }
  const env = (configFile: string) => world.env(configFile);

  /** `serve` over a copy of the pulled store, pushing to `provider`'s fake on its schedule. */
  async function serve(provider: Provider) {
    const dataDir = join(root, `data-${n++}`);
    cpSync(pulled, dataDir, { recursive: true });
    const targetId = `${provider === 'outlook' ? 'staff' : 'teams'}-${n}`;
    const configFile = config(dataDir, provider, targetId);
    const child = rostercal(['serve'], {
      ...env(configFile),
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
    });
    onTestFinished(() => void child.proc.kill('SIGKILL'));
    const stop = async () => {
      child.proc.kill('SIGTERM');
      await child.ended;
    };
    return { child, configFile, targetId, stop };
  }

  async function status(configFile: string): Promise<{ jobs: JobStatus[]; runs: SyncRun[] }> {
    const child = rostercal(['status', '--json', '--runs', '20'], env(configFile));
    expect(await child.exit, child.output()).toBe(0);
    return JSON.parse(child.stdout()) as { jobs: JobStatus[]; runs: SyncRun[] };
  }

  const created = (run: SyncRun) => Object.values(run.counts).reduce((t, c) => t + (c.created ?? 0), 0);
  const deleted = (run: SyncRun) => Object.values(run.counts).reduce((t, c) => t + c.deleted, 0);

  /** Live events in the provider's calendars. */
  function remoteEvents(provider: Provider): number {
    if (provider === 'google')
      return google.calendars().reduce((t, c) => t + google.liveEvents(c.id).length, 0);
    let total = 0;
    for (const mb of graph.mailboxes()) for (const cal of mb.calendars.values()) total += cal.events.size;
    return total;
  }

  beforeAll(async () => {
    world = await startPushWorld(12);
    ({ graph, google } = world);
    root = mkdtempSync(join(tmpdir(), 'rostercal-scheduled-push-'));
    pulled = join(root, 'pulled');
    const child = rostercal(['sync', '--full'], env(config(pulled, null)));
    expect(await child.exit, child.output()).toBe(0);
  }, 120_000);
  afterEach(() => {
    for (const fake of [graph, google]) fake.knobs.faults = [];
  });
  afterAll(async () => {
    await world?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const fake = (p: Provider) => (p === 'outlook' ? graph : google);

  for (const provider of ['outlook', 'google'] as const) {
    for (const code of [401, 403] as const) {
      it(`${provider}: every request answered ${code}: the scheduled push and its job fail, naming the target and ${code}`, async () => {
        fake(provider).knobs.faults = [{ status: code }];
        const s = await serve(provider);
        await s.child.waitFor(PUSH_FINISHED, 120_000);
        await s.stop();
        const { jobs, runs } = await status(s.configFile);
        const push = runs.find((r) => r.kind === 'push');
        expect(push?.status, JSON.stringify(runs)).toBe('failed');
        expect(push?.target).toBe(s.targetId);
        expect(push?.errors.join('\n')).toMatch(new RegExp(`\\b${code}\\b`));
        const job = jobs.find((j) => j.job === 'push');
        expect(job?.lastStatus, JSON.stringify(jobs)).toBe('failed');
        expect(job?.lastError).toMatch(new RegExp(`^push ${s.targetId} \\(${provider}\\): .*\\b${code}\\b`));
      }, 180_000);
    }

    // The fakes answer one request at most three random (`rate`) faults in a row (test/fakes/common.ts), fewer
    // than the push's 10 retries: the push must wait them out, and chance alone cannot use up a write's retries.
    const faults: Record<'429' | '5xx', FaultRule[]> = {
      '429': [
        { status: 429, limit: 3, retryAfterSeconds: 0.05 },
        { status: 429, rate: 0.3, retryAfterSeconds: 0.05 },
      ],
      '5xx': [
        { status: 500, limit: 3 },
        { status: 503, rate: 0.3, retryAfterSeconds: 0.05 },
      ],
    };
    for (const kind of ['429', '5xx'] as const) {
      it(`${provider}: ${kind} on 30 % of requests: the scheduled push completes without a duplicate`, async () => {
        const rules = faults[kind].map((r) => ({ ...r }));
        fake(provider).knobs.faults = rules;
        const before = remoteEvents(provider);
        const s = await serve(provider);
        await s.child.waitFor(PUSH_FINISHED, 120_000);
        // A push that never ends is seen in the log at info: its start and each step (issue 31).
        expect(s.child.output()).toMatch(
          /"msg":"push started"[\s\S]*"step":"writing"[\s\S]*"msg":"push finished"/,
        );
        // The next fire, with the provider well again: a reconciliation that must find nothing to mend.
        fake(provider).knobs.faults = [];
        await s.child.waitFor(TWO_PUSHES_FINISHED, 120_000);
        await s.stop();
        for (const r of rules) expect(r.hits ?? 0, `${r.status} never injected`).toBeGreaterThan(0);
        const { jobs, runs } = await status(s.configFile);
        const pushes = runs.filter((r) => r.kind === 'push').reverse();
        const [first, second] = pushes;
        expect(first?.status, JSON.stringify(first)).toBe('succeeded');
        expect(first!.throttled + first!.retries, JSON.stringify(first)).toBeGreaterThan(0);
        expect(created(first!)).toBeGreaterThan(0);
        expect(remoteEvents(provider) - before).toBe(created(first!));
        expect(second?.status, JSON.stringify(second)).toBe('succeeded');
        expect(created(second!)).toBe(0);
        expect(deleted(second!)).toBe(0);
        expect(jobs.find((j) => j.job === 'push')?.lastStatus).toBe('succeeded');
      }, 180_000);
    }
  }
});
