// Errors that hide the cause: a disk that fills during a pull must say so ("database or disk is full"), not
// "cannot rollback - no transaction is active" (SQLite rolls the transaction back itself on a full disk, and the
// ROLLBACK that followed used to replace the real error).
// The disk is a real 1 MB tmpfs, mounted in a private user and mount namespace (`unshare -rm`), so the test
// needs no root; the small school's full pull needs about 2 MB. A file-size limit (EFBIG) is SQLite's
// "disk I/O error", the other error the issue saw masked.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';

/** Runs the command with `dir` replaced by a fresh tmpfs of `size`, seen by that command alone. */
function onTinyDisk(dir: string, size: string): string[] {
  return ['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o size=${size} tmpfs "$0" && exec "$@"`, dir];
}

describe('a full disk during a pull (rostercal sync)', () => {
  let sandbox: Sandbox;
  let dir: string;
  beforeAll(async () => {
    const probe = spawnSync('unshare', ['-rm', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], {
      encoding: 'utf8',
    });
    if (probe.status !== 0)
      throw new Error(
        `this test needs unshare (util-linux) with user and mount namespaces to mount a tiny tmpfs: ${probe.error?.message ?? probe.stderr}`,
      );
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-full-'));
  });
  afterAll(async () => {
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('names the full disk, never the failed rollback, and exits non-zero', async () => {
    const data = path.join(dir, 'data');
    const child = rostercal(['sync', '--full'], schoolEnv(sandbox, { DATA_DIR: data }), {
      under: onTinyDisk(dir, '1m'),
    });
    const code = await child.exit;
    const out = child.output();
    expect(out).toMatch(/database or disk is full/);
    expect(out).not.toMatch(/cannot rollback/);
    expect(code, out).toBe(1);
  });

  it('names the I/O error when the files may grow no further (ulimit -f), never the failed rollback', async () => {
    const data = path.join(dir, 'limited');
    // 1,000 blocks of 512 bytes: the WAL outgrows it during the first resources.
    const child = rostercal(['sync', '--full'], schoolEnv(sandbox, { DATA_DIR: data }), {
      under: ['sh', '-c', 'ulimit -f 1000 && exec "$@"', 'sh'],
    });
    const code = await child.exit;
    const out = child.output();
    expect(out).toMatch(/disk I\/O error/);
    expect(out).not.toMatch(/cannot rollback/);
    expect(code, out).toBe(1);
  });
});

describe('a full temporary directory during a pull (rostercal sync)', () => {
  let sandbox: Sandbox;
  let dir: string;
  beforeAll(async () => {
    // District scale: its sessions (~37 MB of records) are more than a pull keeps in memory (8 MB), so they go to
    // a temporary file; a school's (~4 MB since sessions keep only their students' ids) stay in memory.
    sandbox = await startWeekSandbox({ seed: 7, scale: 'district' });
    dir = await mkdtemp(path.join(tmpdir(), 'rostercal-tmpfull-'));
  }, 180_000); // a deadline: generating a district took over 60 s at load 25
  afterAll(async () => {
    await sandbox?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('names the temporary directory and TMPDIR, keeps what it wrote before, and exits non-zero', async () => {
    const tmp = path.join(dir, 'tmp');
    const data = path.join(dir, 'data');
    await mkdir(tmp);
    const env = { ...schoolEnv(sandbox, { DATA_DIR: data }), TMPDIR: tmp };
    const child = rostercal(['sync', '--full'], env, {
      under: onTinyDisk(tmp, '512k'),
    });
    const code = await child.exit;
    const out = child.output();
    expect(out).toMatch(
      /sessions: failed, nothing of it was kept: cannot keep the download in a temporary file under .*\(TMPDIR\): .*no space left on device/,
    );
    // The resources before it were written.
    expect(out).toMatch(/students\s+\d+ pages?, \+12000/);
    expect(code, out).toBe(1);
  }, 120_000);
});
