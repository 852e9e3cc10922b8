// A real small filesystem for the full-disk tests: a tmpfs mounted by the test (root or CAP_SYS_ADMIN, as CI runs),
// filled to the last byte with fallocate, and unmounted whatever happens. A machine that cannot mount one fails the
// test naming what it needs; it never skips.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Tmpfs {
  /** A scratch directory beside the mount (configuration files, logs). */
  dir: string;
  /** The mounted filesystem: the test's DATA_DIR. */
  data: string;
  /** Bytes still free on it, as df counts them. */
  available(): number;
  /** One file (`filler`) the size of what is free now. */
  fillOnce(): void;
  /** Fills it to the last byte, again as long as something took what was free meanwhile (at most 20 files). */
  fill(): void;
  /** Removes what fill() and fillOnce() wrote. */
  unfill(): void;
  /** Unmounts it (lazily: a process may still hold a file) and removes the scratch directory. */
  close(): Promise<void>;
}

export async function mountTmpfs(prefix: string, sizeMb = 48): Promise<Tmpfs> {
  const dir = await mkdtemp(path.join(tmpdir(), `rostercal-${prefix}-`));
  const data = path.join(dir, 'data');
  await mkdir(data);
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', data], {
    encoding: 'utf8',
  });
  if (mount.status !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `this test needs to mount a ${sizeMb} MB tmpfs (root, or CAP_SYS_ADMIN): mount said ${mount.error?.message ?? mount.stderr}`,
    );
  }
  const available = () =>
    Number(execFileSync('df', ['--output=avail', '-B1', data], { encoding: 'utf8' }).split('\n')[1]);
  return {
    dir,
    data,
    available,
    fillOnce() {
      execFileSync('fallocate', ['-l', String(available()), path.join(data, 'filler')]);
    },
    fill() {
      for (let i = 0; i < 20 && available() > 0; i++) {
        try {
          execFileSync('fallocate', ['-l', String(available()), path.join(data, `filler-${i}`)], {
            stdio: 'ignore',
          });
        } catch {
          // Less room than df said a moment ago: measure again.
        }
      }
    },
    unfill() {
      for (const f of readdirSync(data))
        if (f.startsWith('filler')) rmSync(path.join(data, f), { force: true });
    },
    async close() {
      execFileSync('umount', ['-l', data]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
