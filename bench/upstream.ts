// npm run bench:upstream — the upstream client against a bare fetch loop, paging through every session of the
// `school`-scale sandbox with teams and staff.
//
// The sandbox runs in a CHILD PROCESS. In-process, its CPU (filtering sessions, shaping 1,000 records with teams,
// students and staff, JSON.stringify of megabytes per page) would run on the same event loop as the code under
// test, adding the same large constant to both sides: that inflates the baseline, flatters the ratio and mixes the
// server's garbage into the client's heap figures. In its own process the server works on the other core, and the
// measured difference is the client's own cost: validation, normalisation, pacing, bookkeeping.
//
// Rounds alternate baseline, client (default: asking for two pages ahead) and client without prefetch, after a
// warm-up of each (JIT, server caches); the medians are compared. The goal ratio is the default client's.
// Options (environment): BENCH_ROUNDS (default 5), BENCH_SCALE (default school).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createUpstreamClient, SESSIONS_PAGE_LENGTH } from '../src/upstream/client.ts';

const NOW = '2026-03-02T00:00:00.000Z';
const SEED = 7;

if (process.argv[2] === '--serve-sandbox') {
  await serveSandbox(process.argv[3] ?? 'school');
} else {
  await main();
}

async function serveSandbox(scale: string): Promise<void> {
  const { startSandbox } = await import(process.env.BENCH_SANDBOX_MODULE ?? '../src/sandbox/index.ts');
  const sb = await startSandbox({ port: 0, seed: SEED, scale, now: NOW });
  const starts = sb.school.sessions.map((s: { start: number }) => s.start);
  process.stdout.write(
    `${JSON.stringify({
      url: sb.url,
      token: sb.token,
      sessions: starts.length,
      first: new Date(Math.min(...starts)).toISOString(),
      last: new Date(Math.max(...starts)).toISOString(),
    })}\n`,
  );
  // Serve until the parent closes our stdin.
  process.stdin.resume();
  await once(process.stdin, 'end');
  await sb.close();
}

interface Run {
  ms: number;
  /** CPU time of this process (user + system): less sensitive than wall time to a busy machine. */
  cpuMs: number;
  pages: number;
  records: number;
  requests: number;
  peakRss: number;
  peakHeap: number;
}

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const scale = process.env.BENCH_SCALE ?? 'school';
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  const { child, info } = await startChild(scale);
  try {
    // A window that covers the whole generated school year, with a day's margin either side.
    const startDateTime = new Date(Date.parse(info.first) - 86_400_000).toISOString();
    const endDateTime = new Date(Date.parse(info.last) + 86_400_000).toISOString();
    const params = { startDateTime, endDateTime, includeTeams: true, includeStaff: true };
    console.log(
      `sandbox: scale ${scale}, ${info.sessions} sessions (${info.first} … ${info.last}), child process ${child.pid}`,
    );

    const baseline = (): Promise<Run> =>
      measure(gc, async () => {
        let page = 1;
        let pages = 0;
        let records = 0;
        for (;;) {
          const q = new URLSearchParams({
            startDateTime,
            endDateTime,
            includeTeams: 'true',
            includeStaff: 'true',
            page: String(page),
            pageLength: String(SESSIONS_PAGE_LENGTH),
          });
          const res = await fetch(`${info.url}/sessions?${q}`, {
            headers: { authorization: `Bearer ${info.token}` },
          });
          if (!res.ok) throw new Error(`baseline: HTTP ${res.status}`);
          const body = (await res.json()) as { data: unknown[]; pagination: { lastPage: number } };
          pages++;
          records += body.data.length;
          if (page >= body.pagination.lastPage) break;
          page++;
        }
        return { pages, records, requests: pages };
      });

    const viaClient = (prefetch: boolean): Promise<Run> =>
      measure(gc, async () => {
        const client = createUpstreamClient({
          baseUrl: info.url,
          token: info.token,
          ...(prefetch ? {} : { pagesAhead: 0 }),
        });
        let pages = 0;
        let records = 0;
        let skipped = 0;
        for await (const page of client.sessions(params)) {
          pages++;
          records += page.records.length;
          skipped += page.skipped.length;
        }
        if (skipped > 0) throw new Error(`client skipped ${skipped} records`);
        return { pages, records, requests: client.totals().requests };
      });

    await baseline();
    await viaClient(true);
    await viaClient(false);
    const base: Run[] = [];
    const cli: Run[] = [];
    const serial: Run[] = [];
    // The order rotates each round, so no variant always runs right after another (server cache, GC debris).
    const variants = [
      async () => void base.push(await baseline()),
      async () => void cli.push(await viaClient(true)),
      async () => void serial.push(await viaClient(false)),
    ];
    for (let r = 0; r < rounds; r++) {
      for (let v = 0; v < variants.length; v++) await variants[(r + v) % variants.length]!();
    }

    const b = summarise(base);
    const c = summarise(cli);
    const n = summarise(serial);
    if (b.records !== c.records || b.pages !== c.pages) {
      throw new Error(
        `baseline read ${b.records} records in ${b.pages} pages, client ${c.records} in ${c.pages}`,
      );
    }
    const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
    console.log(
      `pages ${c.pages} × ≤${SESSIONS_PAGE_LENGTH}, records ${c.records}, rounds ${rounds} (+1 warm-up each)`,
    );
    const table: string[][] = [
      ['', 'wall (median)', 'runs (ms)', 'CPU (median)', 'requests', 'peak RSS', 'peak heap'],
    ];
    for (const [name, sum, runs] of [
      ['bare fetch', b, base],
      ['client', c, cli],
      ['  no prefetch', n, serial],
    ] as const) {
      table.push([
        name,
        `${sum.ms.toFixed(0)} ms`,
        runs.map((r) => r.ms.toFixed(0)).join(' '),
        `${sum.cpuMs.toFixed(0)} ms`,
        String(sum.requests),
        mb(sum.peakRss),
        mb(sum.peakHeap),
      ]);
    }
    const widths = table[0]!.map((_, col) => Math.max(...table.map((row) => row[col]!.length)) + 3);
    for (const row of table)
      console.log(
        row
          .map((cell, col) => cell.padEnd(widths[col]!))
          .join('')
          .trimEnd(),
      );
    const pairs = cli.map((r, i) => (r.ms / base[i]!.ms).toFixed(2)).join(', ');
    const fastest = (runs: Run[]) => Math.min(...runs.map((r) => r.ms));
    console.log(
      `ratio per round (wall): ${pairs}; ratio of the fastest runs: ${(fastest(cli) / fastest(base)).toFixed(3)}`,
    );
    console.log(`CPU of this process, ratio of medians: ${(c.cpuMs / b.cpuMs).toFixed(3)}`);
    console.log(
      `without prefetch: ratio ${(n.ms / b.ms).toFixed(3)} (validation and normalisation alone, nothing overlapped)`,
    );
    const ratio = c.ms / b.ms;
    console.log(
      `ratio client/baseline: ${ratio.toFixed(3)} (goal ≤ 1.15) ${ratio <= 1.15 ? 'OK' : 'MISSED'}`,
    );
  } finally {
    child.stdin?.end();
    await once(child, 'exit');
  }
}

async function startChild(scale: string): Promise<{ child: ChildProcess; info: SandboxInfo }> {
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--serve-sandbox', scale], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  return { child, info: JSON.parse(line) as SandboxInfo };
}

interface SandboxInfo {
  url: string;
  token: string;
  sessions: number;
  first: string;
  last: string;
}

async function measure(
  gc: () => void,
  body: () => Promise<{ pages: number; records: number; requests: number }>,
): Promise<Run> {
  gc();
  let peakRss = 0;
  let peakHeap = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakHeap = Math.max(peakHeap, m.heapUsed);
  };
  const timer = setInterval(sample, 5);
  const started = performance.now();
  const cpu = process.cpuUsage();
  try {
    const r = await body();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    sample();
    return { ...r, ms, cpuMs: (used.user + used.system) / 1000, peakRss, peakHeap };
  } finally {
    clearInterval(timer);
  }
}

function summarise(runs: Run[]): Run {
  const sorted = [...runs].sort((x, y) => x.ms - y.ms);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const cpu = [...runs].sort((x, y) => x.cpuMs - y.cpuMs);
  return {
    ...median,
    cpuMs: cpu[Math.floor(cpu.length / 2)]!.cpuMs,
    peakRss: Math.max(...runs.map((r) => r.peakRss)),
    peakHeap: Math.max(...runs.map((r) => r.peakHeap)),
  };
}
