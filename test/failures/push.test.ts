// Pushes that end mid-way: the real `rostercal sync` (a child process) pushing to the Graph and Google fakes
// (served from this process over HTTP) while they answer with injected faults. Every run either completes or
// exits non-zero with a line naming the target and the cause; none may end with Node's "unsettled top-level
// await" (exit 13) or hang.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import type { FaultRule } from '../fakes/common.ts';
import type { FakeGoogle } from '../fakes/google-calendar.ts';
import type { FakeGraph } from '../fakes/graph.ts';
import { rostercal, writeSchoolConfig } from '../support/cli.ts';
import { type PushWorld, startPushWorld } from '../support/push-world.ts';

const backoff = { baseMs: 20, capMs: 100, maxRetries: 10 };
/** outlook-app: client-credentials grant with a secret the fake refuses; google-key: a service account it does not know. */
type Target = 'outlook' | 'google' | 'outlook-app' | 'google-key';

describe('pushes that end mid-way (rostercal sync against faulty providers)', () => {
  let world: PushWorld;
  let graph: FakeGraph;
  let google: FakeGoogle;
  let root: string;
  /** A data directory holding a pulled school, copied for each run so every run starts from the same store. */
  let pulled: string;
  let n = 0;

  /** `defaults`: the targets' own backoff (1 s doubling to 32 s, 8 retries) instead of the test's quick one. */
  function config(
    dataDir: string,
    target: Target,
    defaults = false,
    outlookSettings: Record<string, unknown> = {},
  ): string {
    const backoffs = defaults ? {} : { backoff };
    const auth =
      target === 'outlook-app'
        ? {
            authorityHost: graph.authorityHost,
            tenantId: 'hill-tenant',
            clientId: 'app',
            clientSecret: 'wrong',
          }
        : { accessToken: 'env:GRAPH_TOKEN' };
    const targets =
      target === 'outlook' || target === 'outlook-app'
        ? [
            {
              id: 'staff',
              provider: 'outlook',
              scope: 'staff',
              outlook: { baseUrl: graph.url, ...auth, ...backoffs, ...outlookSettings },
            },
          ]
        : [
            {
              id: 'teams',
              provider: 'google',
              scope: 'team',
              google: {
                rootUrl: google.url,
                auth: target === 'google-key' ? { key: 'env:SA_KEY' } : { accessToken: 'env:GOOGLE_TOKEN' },
                ...backoffs,
                writesPerSecond: 200,
              },
            },
          ];
    return writeSchoolConfig(root, world.sandbox.url, targets, {
      file: join(root, `config-${n++}.json`),
      extra: { dataDir, publicUrl: 'https://calendars.hill.example' },
    });
  }
  const env = (configFile: string) => world.env(configFile);

  /** `rostercal sync` of a copy of the pulled store (or of `dataDir`, when given), pushing to `target`. */
  async function sync(
    target: Target,
    defaults = false,
    more: { args?: string[]; dataDir?: string; outlook?: Record<string, unknown> } = {},
  ) {
    let dataDir = more.dataDir;
    if (!dataDir) {
      dataDir = join(root, `data-${n++}`);
      cpSync(pulled, dataDir, { recursive: true });
    }
    const configFile = config(dataDir, target, defaults, more.outlook);
    const child = rostercal(['sync', ...(more.args ?? [])], env(configFile));
    onTestFinished(() => void child.proc.kill());
    const { code, signal } = await child.ended;
    return { code, signal, output: child.output(), dataDir, configFile };
  }

  /**
   * The newest push run by its own record: how long it took from its start (so not the process's start-up), and
   * how many retries it counted.
   */
  async function lastPush(dataDir: string): Promise<{ ms: number; retries: number }> {
    const store = await openStore({ dataDir });
    try {
      const [run] = await store.runs.listRuns('hill', { kind: 'push', limit: 1 });
      expect(run?.finishedAt, 'a finished push run').toBeTruthy();
      return { ms: Date.parse(run!.finishedAt!) - Date.parse(run!.startedAt), retries: run!.retries };
    } finally {
      await store.close();
    }
  }
  /**
   * Ended without waiting out the default schedule: its first six waits alone are 1 + 2 + … + 32 = 63 s, so a push
   * under 45 s did not retry through it, on however loaded a machine.
   */
  const BEFORE_THE_SCHEDULE_MS = 45_000;

  /** The push runs `rostercal status --json` lists, newest first. */
  async function pushRuns(
    configFile: string,
  ): Promise<{ status: string; target: string; errors: string[] }[]> {
    const child = rostercal(['status', '--json', '--runs', '20'], env(configFile));
    expect(await child.exit, child.output()).toBe(0);
    const report = JSON.parse(child.stdout()) as {
      runs: { kind: string; status: string; target: string; errors: string[] }[];
    };
    return report.runs.filter((r) => r.kind === 'push');
  }

  beforeAll(async () => {
    world = await startPushWorld(12);
    ({ graph, google } = world);
    root = mkdtempSync(join(tmpdir(), 'rostercal-push-faults-'));
    pulled = join(root, 'pulled');
    const child = rostercal(['sync', '--no-push'], env(config(pulled, 'outlook')));
    expect(await child.exit, child.output()).toBe(0);
  }, 120_000);
  afterEach(() => {
    graph.knobs.faults = [];
    graph.knobs.throttleRate = 0;
    google.knobs.faults = [];
    google.knobs.throttleRate = 0;
  });
  afterAll(async () => {
    await world?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** Every kind of request each provider gets: the batch round trip, calendar creation, listings, writes. */
  const kinds = {
    outlook: [
      /^POST \/v1\.0\/\$batch$/,
      /^POST \/users\/[^/]+\/calendars$/,
      /^GET \/users\/[^/]+\/calendars\?|^GET \/users\/[^/]+\/calendars$/,
      /^GET .*\/events$/,
      /^POST .*\/events$/,
    ],
    google: [
      /^POST \/batch\/calendar\/v3$/,
      /^POST \/calendar\/v3\/calendars$/,
      /^GET \/calendar\/v3\/calendars\/[^/]+\/events$/,
      /^(POST|PUT|PATCH) \/calendar\/v3\/calendars\/[^/]+\/events/,
    ],
  };
  const fake = (target: 'outlook' | 'google') => (target === 'outlook' ? graph : google);
  const label = { outlook: 'hill/staff \\(outlook\\)', google: 'hill/teams \\(google\\)' };

  for (const target of ['outlook', 'google'] as const) {
    it(`${target}: 30 % of every kind of request answered 429 with Retry-After: the push completes`, async () => {
      // The first request of each kind for certain, then 30 %.
      const rules: FaultRule[] = kinds[target].flatMap((match) => [
        { match, status: 429, limit: 1, retryAfterSeconds: 0.05 },
        { match, status: 429, rate: 0.3, retryAfterSeconds: 0.05 },
      ]);
      fake(target).knobs.faults = rules;
      const first = await sync(target);
      expect(first.output).not.toMatch(/unsettled top-level await/);
      expect(first.code, first.output).toBe(0);
      const created = Number(new RegExp(`push ${label[target]}: (\\d+) created`).exec(first.output)?.[1]);
      expect(created, first.output).toBeGreaterThan(0);
      expect(first.output).toMatch(new RegExp(`push ${label[target]}: .*, 0 deleted, .* succeeded`));
      // A second push from a store that knows nothing of the first finds the calendars and lists them.
      const second = await sync(target);
      expect(second.code, second.output).toBe(0);
      expect(second.output).toMatch(new RegExp(`push ${label[target]}: 0 created, .* succeeded`));
      for (const rule of rules.filter((r) => r.limit))
        expect(rule.hits ?? 0, `no 429 for ${rule.match}`).toBe(1);
    }, 180_000);

    for (const status of [401, 403, 500] as const) {
      it(`${target}: every request answered ${status}: exit 1 naming the target and the cause`, async () => {
        fake(target).knobs.faults = [{ status }];
        // 401 and 403 cannot pass on a later try: they fail at once even with the default backoff (minutes).
        const refused = status !== 500;
        const r = await sync(target, refused);
        if (refused) {
          // Not retried at all: the run counted none, and it did not wait out the default schedule.
          const push = await lastPush(r.dataDir);
          expect(push.retries, r.output).toBe(0);
          expect(push.ms, r.output).toBeLessThan(BEFORE_THE_SCHEDULE_MS);
        }
        expect(r.output).not.toMatch(/unsettled top-level await/);
        expect(r.code, r.output).toBe(1);
        expect(r.output).toMatch(
          new RegExp(`push ${label[target]}: .*failed\\n(.*\\n)*  problem: .*\\b${status}\\b`),
        );
      }, 120_000);
    }
  }

  for (const target of ['outlook', 'google'] as const) {
    for (const status of [401, 403] as const) {
      it(`${target}: --reconcile of pushed calendars answered ${status}: the push fails, exit 1, status says failed`, async () => {
        const first = await sync(target);
        expect(first.code, first.output).toBe(0);
        // Nothing to write: only the listings of --reconcile reach the provider, and every one is refused.
        fake(target).knobs.faults = [{ status }];
        const r = await sync(target, true, { args: ['--reconcile'], dataDir: first.dataDir });
        expect(r.output).toMatch(
          new RegExp(`push ${label[target]}: .*failed\\n(.*\\n)*  problem: .*\\b${status}\\b`),
        );
        expect(r.output).not.toMatch(new RegExp(`push ${label[target]}: .*succeeded`));
        expect(r.code, r.output).toBe(1);
        const [last] = await pushRuns(r.configFile);
        expect(last?.status, JSON.stringify(last)).toBe('failed');
        expect(last?.errors.join('\n')).toMatch(new RegExp(`\\b${status}\\b`));
      }, 180_000);
    }
  }

  it('outlook: the token endpoint refuses the app secret: exit 1 within seconds, naming the cause', async () => {
    const r = await sync('outlook-app', true);
    expect(r.code, r.output).toBe(1);
    expect((await lastPush(r.dataDir)).ms, r.output).toBeLessThan(BEFORE_THE_SCHEDULE_MS);
    expect(r.output).toMatch(
      /push hill\/staff \(outlook\): .*failed\n(.*\n)* {2}problem: .*invalid_client|AADSTS7000215/,
    );
    expect(r.output).not.toContain('wrong');
  }, 120_000);

  it('outlook: the token endpoint never answers: exit 1 saying so, not held open by the abandoned request', async () => {
    // Seen from outside: the push failed with its TimeoutError and the summary was printed, but MSAL's own token
    // request, which does not honour the abort, kept its socket and with it the process alive for minutes.
    graph.knobs.faults = [{ match: /^POST \/hill-tenant\/oauth2\/v2\.0\/token$/, status: 500, stall: true }];
    const r = await sync('outlook-app', false, { outlook: { requestTimeoutMs: 500 } });
    expect(r.code, r.output).toBe(1);
    expect(r.output).toMatch(/no answer from the token endpoint within 500 ms/);
  }, 150_000);

  it('google: the token endpoint refuses the service account: exit 1 within seconds, naming the cause', async () => {
    const r = await sync('google-key', true);
    expect(r.code, r.output).toBe(1);
    expect((await lastPush(r.dataDir)).ms, r.output).toBeLessThan(BEFORE_THE_SCHEDULE_MS);
    expect(r.output).toMatch(
      /push hill\/teams \(google\): .*failed\n(.*\n)* {2}problem: .*(invalid_grant|401|403)/,
    );
    expect(r.output).not.toContain('PRIVATE KEY');
  }, 120_000);
});
