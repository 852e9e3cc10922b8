// A node process as the benchmarks measure it: started with these arguments, timed from spawn to exit, its
// output collected.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

export interface NodeRun {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

export async function runNode(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<NodeRun> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { ms: performance.now() - t0, code, stdout, stderr };
}
