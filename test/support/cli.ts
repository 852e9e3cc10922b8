// The real `rostercal` CLI as a child process, for the tests: output (stdout and stderr together, and
// apart), a way to wait for a line, and the exit code.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rostercalNodeFlags } from '../../bench/support/node-flags.ts';
import { type Sandbox, SCHOOL_TIME_ZONE } from '../../src/sandbox/index.ts';

export interface Child {
  proc: ChildProcess;
  /** stdout and stderr interleaved as they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves when the output matches; rejects on timeout or when the process exits without it. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exit: Promise<number | null>;
  /** The exit code and the signal. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface RunOptions {
  /** A command the CLI runs under (e.g. `unshare … sh -c …`), given the node command line as its arguments. */
  under?: string[];
}

export function rostercal(
  args: string[],
  env: Record<string, string | undefined>,
  opts: RunOptions = {},
): Child {
  // With the V8 flags of the command's first line, as `rostercal`, `npm start` and the image run it: a child
  // started as `node bin/rostercal.js` would get V8's machine-sized heap instead, and hide a pull that outgrows it.
  const command = [
    ...(opts.under ?? []),
    process.execPath,
    ...rostercalNodeFlags(),
    'bin/rostercal.js',
    ...args,
  ];
  const proc = spawn(command[0]!, command.slice(1), {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) {
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  proc.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
    onData(d);
  });
  proc.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
    onData(d);
  });
  const ended = once(proc, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const exit = ended.then((e) => e.code);
  return {
    proc,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    ended,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        if (pattern.test(out)) return resolve();
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in output:\n${out}`)), timeoutMs);
        waiters.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
        exit.then(() => {
          clearTimeout(timer);
          if (!pattern.test(out)) reject(new Error(`exited without ${pattern}; output:\n${out}`));
        });
      }),
  };
}

/** Stops a child that still runs (SIGTERM) and waits for its exit. */
export async function stopped(child: Child): Promise<void> {
  if (child.proc.exitCode === null) child.proc.kill('SIGTERM');
  await child.exit;
}

/** A command run to its end: the exit code, and stdout and stderr apart. */
export async function runRostercal(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = rostercal(args, env);
  const code = await child.exit;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/** One school by environment, pointed at a sandbox, with the store named by `store`. */
export function schoolEnv(
  sandbox: Pick<Sandbox, 'url' | 'token'>,
  store: { DATABASE_URL?: string; DATA_DIR?: string },
): Record<string, string> {
  return {
    UPSTREAM_URL: sandbox.url,
    UPSTREAM_TOKEN: sandbox.token,
    SCHOOL_TZ: 'Australia/Sydney',
    SCHOOL_ID: 'hillcrest',
    SCHOOL_NAME: 'Hillcrest College',
    PUBLIC_URL: 'https://calendars.hillcrest.example',
    ...(store as Record<string, string>),
  };
}

/** A command run to its end: the exit code and its output (stdout and stderr interleaved). */
export async function runCli(
  args: string[],
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; out: string }> {
  const child = rostercal(args, env);
  const code = await child.exit;
  return { code, out: child.output() };
}

/**
 * A config file (`DIR/config.json`, data in `DIR/data`) with one school, `hill`, pulling from `upstreamUrl` with the
 * token in HILL_TOKEN, pushing to `targets`; `extra` adds top-level settings and `school` the school's; `file`
 * names another file for it (several configs in one folder). Returns the file's path, for ROSTERCAL_CONFIG.
 */
export function writeSchoolConfig(
  dir: string,
  upstreamUrl: string,
  targets: unknown[],
  more: { extra?: Record<string, unknown>; school?: Record<string, unknown>; file?: string } = {},
): string {
  const config = more.file ?? join(dir, 'config.json');
  writeFileSync(
    config,
    JSON.stringify({
      dataDir: join(dir, 'data'),
      ...more.extra,
      schools: [
        {
          id: 'hill',
          name: 'Hill School',
          upstream: { url: upstreamUrl, token: 'env:HILL_TOKEN' },
          timeZone: SCHOOL_TIME_ZONE,
          ...more.school,
          targets,
        },
      ],
    }),
  );
  return config;
}

/**
 * A config file for `serve` with the school `schoolEnv` describes (hillcrest), its store in `dataDir`, listening on
 * `port`, and its incremental pull fired by `incremental` (a node-cron schedule, seconds first). Returns its path.
 */
export function writeServeConfig(
  file: string,
  opts: { upstream: Pick<Sandbox, 'url' | 'token'>; port: number; dataDir: string; incremental: string },
): string {
  writeFileSync(
    file,
    JSON.stringify({
      publicUrl: `http://127.0.0.1:${opts.port}`,
      port: opts.port,
      dataDir: opts.dataDir,
      schools: [
        {
          id: 'hillcrest',
          name: 'Hillcrest College',
          upstream: { url: opts.upstream.url, token: opts.upstream.token },
          timeZone: 'Australia/Sydney',
          schedules: { incremental: opts.incremental },
        },
      ],
    }),
  );
  return file;
}

/**
 * What a command printed holds no credential: not the upstream's bearer token, not a feed's capability (a 32
 * character token after /feeds/ or /family/, or on its own as `feeds list` would show it).
 */
export function expectNoSecrets(printed: string, upstreamToken: string): void {
  if (printed.includes(upstreamToken)) throw new Error(`the upstream token was printed:\n${printed}`);
  const capability = /\/(feeds|family)\/[A-Za-z0-9_-]{32}/.exec(printed);
  if (capability) throw new Error(`a capability URL was printed (${capability[0]}):\n${printed}`);
}
