// `rostercal feeds list | head`, `rostercal status | less` quit early: the reader closes the pipe while the command
// still writes. Seen from outside: Node's unhandled EPIPE printed a stack trace and the command exited 1. A command
// whose reader has gone stops writing and finishes what it was doing (a sync still completes its push), exiting as
// it would have, with nothing on stderr about the pipe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rostercal } from '../support/cli.ts';
import { type PulledSchool, schoolPulledByCli } from '../support/pulled-school.ts';

/** Runs the command with its stdout closed by the reader before the command writes anything. */
async function withReaderGone(args: string[], env: Record<string, string>) {
  const child = rostercal(args, env);
  child.proc.stdout!.destroy();
  const { code } = await child.ended;
  return { code, stderr: child.stderr() };
}

describe('a command whose reader closed the pipe', () => {
  let school: PulledSchool;
  let env: Record<string, string>;

  beforeAll(async () => {
    school = await schoolPulledByCli({ seed: 6, dirPrefix: 'rostercal-pipe-' });
    env = school.env;
  }, 120_000);

  afterAll(async () => {
    await school?.close();
  });

  it.each([[['--help']], [['feeds', 'list']], [['status']]])(
    'rostercal %j exits 0 quietly',
    async (args) => {
      const { code, stderr } = await withReaderGone(args, env);
      expect(stderr).not.toMatch(/EPIPE|Unhandled|at .*\.(ts|js):\d+/);
      expect(code, stderr).toBe(0);
    },
    60_000,
  );

  it('a sync with its reader gone still completes (the next status shows it finished)', async () => {
    const { code, stderr } = await withReaderGone(['sync'], env);
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code, stderr).toBe(0);
    const status = rostercal(['status'], env);
    expect(await status.exit, status.output()).toBe(0);
    expect(status.stdout()).not.toMatch(/running|interrupted/i);
  }, 120_000);
});
