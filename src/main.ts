// rostercal CLI: one file per command under src/cli/, loaded on demand so a command pays only for what it uses.
// Started by bin/rostercal.js (the V8 flags and the compile cache: see there); `node src/main.ts` works too, only
// slower to start. Each command is built with src/cli/command.ts (arguments, usage, exit codes); this file only
// dispatches.
import { keepGoingWhenReaderLeaves, ownLines, printError, printLines } from './terminal.ts';

const commands: Record<
  string,
  { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> }
> = {
  serve: { summary: 'web server and scheduler (what npm start runs)', load: () => import('./cli/serve.ts') },
  sync: { summary: 'pull (and push) now', load: () => import('./cli/sync.ts') },
  sandbox: {
    summary: 'the Extracurricular Data Service emulator alone',
    load: () => import('./cli/sandbox.ts'),
  },
  migrate: { summary: 'apply store migrations', load: () => import('./cli/migrate.ts') },
  backup: {
    summary: 'a consistent backup of the store, rotation record and feed secret',
    load: () => import('./cli/backup.ts'),
  },
  restore: {
    summary: 'a backup into an empty store, with the newest rotation record',
    load: () => import('./cli/restore.ts'),
  },
  status: { summary: 'sync runs and scheduled jobs', load: () => import('./cli/status.ts') },
  feeds: { summary: 'list or rotate feed URLs', load: () => import('./cli/feeds.ts') },
  roster: { summary: 'print a PDF roster', load: () => import('./cli/roster.ts') },
  audit: {
    summary: 'the audit log: roster downloads, sign-ins, feed rotations (newest first)',
    load: () => import('./cli/audit.ts'),
  },
  sessions: {
    summary: "a team's upcoming sessions (ids, dates, status)",
    load: () => import('./cli/sessions.ts'),
  },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(9)} ${c.summary}`);
  return [
    'usage: rostercal <command> [options]',
    '',
    'commands:',
    ...lines,
    '',
    'rostercal <command> --help for its options',
    'exit status: 0 success, 1 failure, 2 usage or configuration error',
  ].join('\n');
}

keepGoingWhenReaderLeaves();
const [name, ...rest] = process.argv.slice(2);
const command = name ? commands[name] : undefined;
if (!command) {
  // No command is a usage error (exit 2, like an unknown one): a script that forgot it must not succeed.
  const asked = name === '--help' || name === '-h' || name === 'help';
  if (asked) printLines(ownLines(usage()));
  else
    printLines(
      [...(name === undefined ? [] : [`unknown command: ${name}`, '']), ...ownLines(usage())],
      'stderr',
    );
  process.exitCode = asked ? 0 : 2;
} else {
  try {
    const mod = await command.load();
    process.exitCode = await mod.run(rest);
  } catch (err) {
    printError(`rostercal ${name}: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
  // The command has done its work and said so (`serve` and `sandbox` return only once stopped), so nothing left
  // may hold the process for long: a request a library would not abandon (MSAL's token request ignores its abort
  // signal) kept `rostercal sync` alive for minutes after it had printed its failure. What it wrote goes out first
  // (an exit at once cut `feeds list --json` short on a pipe); then a process nothing holds ends by itself, and
  // one that something still holds ends 2 s later.
  const flushed = (s: NodeJS.WriteStream) => new Promise<void>((resolve) => s.write('', () => resolve()));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  setTimeout(() => process.exit(), 2_000).unref();
}
