#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=1536
// rostercal CLI: one file per command under src/cli/, loaded on demand so a command pays only for what it uses.
// The V8 flags on the first line (also in `npm start` and the Dockerfile) bound the heap V8 lets garbage fill.
// V8 sizes the young generation by the machine's memory, and grows the old one by a larger factor the larger
// the heap limit (4.5 GB by default on a 24 GB machine); a pull's per-page garbage then raised a school's sync to
// ~330 MB and a district's to ~455 MB. Measured with 8 MB semi-spaces and a 1.5 GB limit: ~235 and ~340 MB, the
// same time at school, ~10 % more CPU at district (a 2 GB limit changed nothing, 1 GB no more than 1.5 GB).
// serve's largest footprint measured (a district's full re-render: 743 MB RSS) is under half the limit; one far larger
// raises it with `node --max-old-space-size=N src/main.ts` (NODE_OPTIONS cannot: this line comes after it).
// Each command is built with src/cli/command.ts (arguments, usage, exit codes); this file only dispatches.
import { enableCompileCache } from 'node:module';

// Every start strips the types of and compiles some hundred modules: about 1 s of a `rostercal sync` and 20 MB of
// its peak memory (the stripper's WebAssembly). Node's compile cache keeps both results on disk, keyed by the
// source's content, so an edited file is compiled afresh. Default location: the OS temp directory
// (NODE_COMPILE_CACHE=dir chooses another, NODE_DISABLE_COMPILE_CACHE=1 turns it off); a cache it cannot
// use costs nothing but the saving.
enableCompileCache();
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

const [name, ...rest] = process.argv.slice(2);
const command = name ? commands[name] : undefined;
if (!command) {
  // No command is a usage error (exit 2, like an unknown one): a script that forgot it must not succeed.
  const asked = name === '--help' || name === '-h' || name === 'help';
  if (asked) console.log(usage());
  else console.error(name === undefined ? usage() : `unknown command: ${name}\n\n${usage()}`);
  process.exitCode = asked ? 0 : 2;
} else {
  try {
    const mod = await command.load();
    process.exitCode = await mod.run(rest);
  } catch (err) {
    console.error(`rostercal ${name}: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
