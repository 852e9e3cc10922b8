// npm run bench:start — how fast the little commands start (issue 28: "a command that needs little loads only
// what it uses"): `rostercal status`, `sessions --team ID` and `feeds list`, as whole processes (start to exit,
// with the V8 flags and the compile cache bin/rostercal.js gives them), against the same commands of a base
// version measured in the same run, alternating (base, this, base, this, …) so that the machine's load falls on
// both alike.
//
// The base version is a commit (BENCH_BASE, default the last commit before these commands were trimmed) written
// out with `git archive` into a temporary directory beside this checkout's node_modules. Each version gets a
// store of its own (the same school: a sandbox at school scale, one full sync by that version), so neither reads
// a store migrated by the other. Modules loaded are counted in one extra run of each (a module hook slows the
// run it counts, so the timed runs have none).
// Environment: BENCH_BASE (a commit), BENCH_ROUNDS (timed runs of each command and version; default 15).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../test/support/ports.ts';
import { rostercalNodeFlags } from './support/node-flags.ts';
import { runNode } from './support/run-node.ts';

const ROOT = path.join(import.meta.dirname, '..');
const BASE = process.env.BENCH_BASE ?? 'ff03535';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const NODE_FLAGS = rostercalNodeFlags();
const COUNT_HOOK = path.join(ROOT, 'bench/support/count-modules.js');
/** Writes the process's CPU time at exit (bench:sync's preload; both versions get it from this checkout). */
const USAGE_HOOK = path.join(ROOT, 'bench/support/max-rss.js');
let runs = 0;

interface Version {
  name: string;
  root: string;
  env: Record<string, string>;
}

interface Run {
  ms: number;
  /** CPU time of the process (user + system): steadier than wall time on a machine others load. */
  cpuMs: number;
  stdout: string;
  stderr: string;
}

async function rostercal(v: Version, argv: string[], extraFlags: string[] = []): Promise<Run> {
  const usageFile = path.join(tmpdir(), `rostercal-bench-start-${process.pid}-${++runs}`);
  const { ms, code, stdout, stderr } = await runNode(
    [...NODE_FLAGS, '--import', USAGE_HOOK, ...extraFlags, 'bin/rostercal.js', ...argv],
    {
      cwd: v.root,
      env: { ...process.env, LOG_LEVEL: 'warn', ...v.env, BENCH_RSS_FILE: usageFile },
    },
  );
  if (code !== 0)
    throw new Error(`${v.name}: rostercal ${argv.join(' ')} exited ${code}:\n${stderr.slice(-2000)}`);
  const { cpuMs } = JSON.parse(await readFile(usageFile, 'utf8')) as { cpuMs: number };
  await rm(usageFile, { force: true });
  return { ms, cpuMs, stdout, stderr };
}

async function waitForSandbox(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`${url}/_sandbox/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the sandbox did not start');
}

/** A store holding the school, made by this version's own full sync. */
async function prepare(v: Version, work: string, url: string): Promise<void> {
  const dir = path.join(work, v.name);
  const configFile = path.join(work, `${v.name}.json`);
  const config = {
    schools: [
      {
        id: 'bench',
        name: 'Bench School',
        upstream: { url, token: 'sandbox-token' },
        timeZone: 'Australia/Sydney',
      },
    ],
  };
  await writeFile(configFile, JSON.stringify(config), { mode: 0o600 });
  Object.assign(v.env, {
    ROSTERCAL_CONFIG: configFile,
    DATA_DIR: dir,
    PUBLIC_URL: 'http://localhost:1',
  });
  await rostercal(v, ['sync', '--full']);
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function modulesLoaded(v: Version, argv: string[]): Promise<string> {
  const r = await rostercal(v, argv, ['--import', COUNT_HOOK]);
  const line = r.stderr.split('\n').find((l) => l.startsWith('modules loaded: '));
  if (!line) throw new Error(`${v.name}: no module count from rostercal ${argv.join(' ')}`);
  return line.slice('modules loaded: '.length);
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(tmpdir(), 'rostercal-bench-start-'));
  const baseRoot = path.join(work, 'base');
  const sha = execFileSync('git', ['rev-parse', '--short', BASE], { cwd: ROOT, encoding: 'utf8' }).trim();
  const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  execFileSync('sh', ['-c', `mkdir -p "${baseRoot}" && git archive ${sha} | tar -x -C "${baseRoot}"`], {
    cwd: ROOT,
  });
  await symlink(path.join(ROOT, 'node_modules'), path.join(baseRoot, 'node_modules'));
  const versions: Version[] = [
    { name: `base ${sha}`, root: baseRoot, env: {} },
    { name: `this ${head}`, root: ROOT, env: {} },
  ];
  const port = await freePort();
  const sandbox = spawn(
    process.execPath,
    ['bin/rostercal.js', 'sandbox', '--port', String(port), '--seed', '7', '--scale', 'school'],
    { cwd: ROOT, stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForSandbox(url);
    for (const v of versions) await prepare(v, work, url);
  } finally {
    sandbox.kill();
  }
  const feeds = JSON.parse((await rostercal(versions[1]!, ['feeds', 'list', '--json'])).stdout) as {
    scope: string;
    id: number;
  }[];
  const team = feeds.find((f) => f.scope === 'team')?.id;
  if (team === undefined) throw new Error('no team feed in the store');
  const commands = [['status'], ['sessions', '--team', String(team)], ['feeds', 'list']];
  console.log(
    `bench:start: node ${NODE_FLAGS.join(' ')}, ${ROUNDS} runs of each command and version, alternating; ` +
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
  );
  // Warm the compile cache of both versions, so neither pays compilation in a timed run.
  for (const argv of commands) for (const v of versions) await rostercal(v, argv);
  const times = new Map<string, Run[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const argv of commands) {
      // Alternate which version goes first, so a trend in the machine's load favours neither.
      const order = round % 2 ? [...versions].reverse() : versions;
      for (const v of order) {
        const key = `${argv[0]} ${v.name}`;
        times.set(key, [...(times.get(key) ?? []), await rostercal(v, argv)]);
      }
    }
  }
  for (const argv of commands) {
    const [before, after] = versions.map((v) => times.get(`${argv[0]} ${v.name}`)!) as [Run[], Run[]];
    console.log(`rostercal ${argv.join(' ')}:`);
    for (const [i, v] of versions.entries()) {
      const xs = [before, after][i]!;
      const wall = xs.map((x) => x.ms);
      console.log(
        `  ${v.name.padEnd(14)} wall median ${ms(median(wall))} (min ${ms(Math.min(...wall))}, max ${ms(Math.max(...wall))}), ` +
          `CPU median ${ms(median(xs.map((x) => x.cpuMs)))}; modules ${await modulesLoaded(v, argv)}`,
      );
    }
    const ratio = (f: (r: Run) => number) => (median(after.map(f)) / median(before.map(f))).toFixed(2);
    console.log(
      `  this / base: wall ${ratio((x) => x.ms)}×, CPU ${ratio((x) => x.cpuMs)}× (medians; CPU is the steadier under load)`,
    );
  }
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  await rm(work, { recursive: true, force: true });
}

await main();
