// npm run bench:push — pushing the `school` scale to the fake Google Calendar (a calendar per team) and the fake
// Microsoft Graph (a mailbox calendar per staff member), each answering after 20 ms per request: the initial
// push, then an incremental push after 1 % of the sessions changed upstream.
//
// The fakes run in a child process (their CPU would otherwise sit on the event loop under test); the sandbox and
// the pull only prepare the store and are not measured.
//
// Printed: wall time, HTTP requests per provider, writes per changed event and per changed session, and for
// Outlook HTTP round trips per event written. The baseline, counted in the same run, is what a tool without a
// mapping table does on every run (rewrite every event: one write per event, and for Graph one round trip per
// write).
// Goals (issue 6): writes per changed event = 1.0; Outlook round trips per event ≤ 0.06 (batches of 20);
// incremental push after a 1 % change ≤ 5 s.
// Options (environment): BENCH_SCALE (default school), BENCH_LATENCY_MS (default 20).
import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type PushTargetConfig, parseTargets } from '../src/config/push-targets.ts';
import { parseConfig } from '../src/config.ts';
import { syncWindow } from '../src/jobs/window.ts';
import { pushTarget } from '../src/push/run.ts';
import type { PushSummary } from '../src/push/summary.ts';
import { SCHOOL_TIME_ZONE, startSandbox } from '../src/sandbox/index.ts';
import { openStore } from '../src/store/index.ts';
import { pullSchool } from '../src/sync/pull.ts';
import { createUpstreamClient } from '../src/upstream/client.ts';
import { trustCertificate } from '../test/fakes/tls.ts';

const SCALE = (process.env.BENCH_SCALE ?? 'school') as 'school';
const LATENCY = Number(process.env.BENCH_LATENCY_MS ?? 20);

interface FakeStats {
  google: { requests: number; writes: number; throttled: number };
  graph: {
    requests: number;
    batches: number;
    batchItems: number;
    writes: number;
    maxConcurrency: number;
    rejections: number;
  };
}

async function serveFakes(): Promise<void> {
  const { startFakeGoogle } = await import('../test/fakes/google-calendar.ts');
  const { startFakeGraph } = await import('../test/fakes/graph.ts');
  const google = await startFakeGoogle({ knobs: { latencyMs: LATENCY } });
  const graph = await startFakeGraph({ knobs: { latencyMs: LATENCY, batchItemLatencyMs: 2 } });
  const stats = (): FakeStats => ({
    google: {
      requests: google.stats.requests,
      writes: google.stats.writes,
      throttled: google.stats.throttled,
    },
    graph: {
      requests: graph.stats.requests,
      batches: graph.stats.batches,
      batchItems: graph.stats.batchItems,
      writes: graph.stats.writes,
      maxConcurrency: Math.max(0, ...Object.values(graph.stats.maxConcurrencyPerMailbox)),
      rejections: graph.stats.concurrencyRejections,
    },
  });
  process.on('message', (msg: { type: string }) => {
    if (msg.type === 'stats') process.send?.({ type: 'stats', stats: stats() });
    if (msg.type === 'reset') {
      google.resetStats();
      graph.resetStats();
      process.send?.({ type: 'reset' });
    }
    if (msg.type === 'stop') void Promise.all([google.close(), graph.close()]).then(() => process.exit(0));
  });
  process.send?.({
    type: 'ready',
    google: { url: google.url, token: google.token },
    graph: { url: graph.url, token: graph.token, cert: graph.cert },
  });
}

function ask<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (msg: { type: string } & T) => {
      if (msg.type !== type) return;
      child.off('message', on);
      resolve(msg);
    };
    child.on('message', on);
    child.send({ type });
  });
}

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rostercal-bench-push-'));
  const sandbox = await startSandbox({ seed: 7, scale: SCALE });
  const store = await openStore({ file: path.join(dir, 'bench.sqlite') });
  const child = fork(import.meta.filename, ['--serve-fakes'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const [ready] = (await once(child, 'message')) as [
      { google: { url: string; token: string }; graph: { url: string; token: string; cert: string } },
    ];
    trustCertificate(ready.graph.cert);
    const client = createUpstreamClient({
      baseUrl: sandbox.url,
      token: sandbox.token,
      rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
    });
    const school = parseConfig({
      schools: [
        {
          id: 'bench',
          name: 'Bench School',
          upstream: { url: sandbox.url, token: sandbox.token },
          timeZone: SCHOOL_TIME_ZONE,
        },
      ],
    }).schools[0]!;
    let t = performance.now();
    await pullSchool({ store, client, school, kind: 'full' });
    console.log(
      `setup: ${SCALE} school pulled into SQLite in ${fmt(performance.now() - t)}; fakes answer after ${LATENCY} ms per request`,
    );

    const targets = parseTargets(
      [
        {
          id: 'teams-google',
          provider: 'google',
          scope: 'team',
          google: {
            rootUrl: ready.google.url,
            auth: { accessToken: ready.google.token },
            writesPerSecond: 1000,
            concurrency: 16,
          },
        },
        {
          id: 'staff-outlook',
          provider: 'outlook',
          scope: 'staff',
          outlook: { baseUrl: ready.graph.url, accessToken: ready.graph.token },
        },
      ],
      'bench.targets',
    );
    // Provider modules load on first use (googleapis alone takes a second or more): not what is measured here.
    await Promise.all([import('../src/push/google/index.ts'), import('../src/push/outlook/index.ts')]);
    const run = async (target: PushTargetConfig) => {
      await ask(child, 'reset');
      const start = performance.now();
      const summary = await pushTarget({ store, school, target });
      const ms = performance.now() - start;
      const stats = (await ask<{ stats: FakeStats }>(child, 'stats')).stats;
      return { summary, ms, stats };
    };
    const written = (s: PushSummary) => s.totals.created + s.totals.updated + s.totals.deleted;

    // --- initial push
    const initial = new Map<string, Awaited<ReturnType<typeof run>>>();
    for (const target of targets) initial.set(target.id, await run(target));
    const events = new Map<string, number>();
    console.log('\ninitial push');
    for (const target of targets) {
      const r = initial.get(target.id)!;
      const s = r.summary;
      events.set(target.id, s.totals.created);
      const req = target.provider === 'google' ? r.stats.google.requests : r.stats.graph.requests;
      const extra =
        target.provider === 'outlook'
          ? `, ${r.stats.graph.batches} batches of ${(r.stats.graph.batchItems / Math.max(1, r.stats.graph.batches)).toFixed(1)} items, ` +
            `round trips per event ${(req / Math.max(1, written(s))).toFixed(3)} (baseline 1.000), max ${r.stats.graph.maxConcurrency} in flight per mailbox, ${r.stats.graph.rejections} concurrency rejections`
          : `, requests per event ${(req / Math.max(1, written(s))).toFixed(3)}`;
      console.log(
        `  ${target.provider.padEnd(8)} ${fmt(r.ms).padStart(9)}  ${s.calendars.length} calendars, ${s.totals.created} events created, ${req} HTTP requests${extra}; status ${s.status}`,
      );
    }

    // --- 1 % of the sessions in the window change upstream (parent notes: every audience sees them)
    const w = syncWindow(new Date(), targets[0]!.window);
    const inWindow = sandbox.school.sessions.filter(
      (s) => s.end > Date.parse(w.from) && s.start < Date.parse(w.to),
    );
    const count = Math.max(1, Math.round(inWindow.length / 100));
    const step = Math.floor(inWindow.length / count);
    const changed = Array.from({ length: count }, (_, i) => inWindow[i * step]!.id);
    const email = sandbox.school.users.find((u) => u.email)!.email;
    for (let i = 0; i < changed.length; i += 100) {
      await client.updateSessions({
        email,
        sessions: changed
          .slice(i, i + 100)
          .map((id) => ({ id, studentParentNotes: `Changed for the benchmark (${id})` })),
      });
    }
    t = performance.now();
    await pullSchool({ store, client, school, kind: 'incremental' });
    const changedSet = new Set(changed);
    console.log(
      `\n${changed.length} of ${inWindow.length} sessions in the window changed upstream (incremental pull ${fmt(performance.now() - t)})`,
    );

    console.log('\nincremental push');
    let total = 0;
    for (const target of targets) {
      const mapped = (await store.push.listPushMappings(school.id, target.id)).filter((m) =>
        changedSet.has(m.sessionId),
      ).length;
      const sessionsTouched = new Set(
        (await store.push.listPushMappings(school.id, target.id))
          .filter((m) => changedSet.has(m.sessionId))
          .map((m) => m.sessionId),
      ).size;
      const r = await run(target);
      total += r.ms;
      const s = r.summary;
      const writes = target.provider === 'google' ? r.stats.google.writes : r.stats.graph.writes;
      const req = target.provider === 'google' ? r.stats.google.requests : r.stats.graph.requests;
      const baseline = events.get(target.id)!;
      console.log(
        `  ${target.provider.padEnd(8)} ${fmt(r.ms).padStart(9)}  ${sessionsTouched} changed sessions in ${mapped} events; ${writes} writes ` +
          `(per changed event ${(writes / Math.max(1, mapped)).toFixed(2)}, per changed session ${(writes / Math.max(1, sessionsTouched)).toFixed(2)}), ` +
          `${req} HTTP requests; baseline rewrite-all: ${baseline} writes (${(baseline / Math.max(1, writes)).toFixed(0)}× ours); status ${s.status}`,
      );
    }
    console.log(`  total    ${fmt(total).padStart(9)}`);

    // --- goals
    console.log('\ngoals');
    const o = initial.get('staff-outlook')!;
    const rt = o.stats.graph.requests / Math.max(1, written(o.summary));
    console.log(`  Outlook round trips per event ≤ 0.06: ${rt.toFixed(3)} ${rt <= 0.06 ? 'met' : 'NOT met'}`);
    console.log(
      `  incremental push after 1 % change ≤ 5 s: ${fmt(total)} ${total <= 5000 ? 'met' : 'NOT met'}`,
    );
  } finally {
    child.send({ type: 'stop' });
    await once(child, 'exit').catch(() => {});
    await store.close();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  }
}

// Last, so every module-level constant above is initialised before either entry point runs.
if (process.argv[2] === '--serve-fakes') await serveFakes();
else await main();
