// `rostercal restore --from DIR` as a child process: a backup of the SQLite store a real `rostercal sync` filled
// from the sandbox over HTTP, restored into an empty DATA_DIR, reads as the school it was (`status`); the refusals
// (exit 2) name what is missing, and a restore without a newer rotation record says what that risks.
// (Rotated URLs staying dead across a restore: test/privacy/backup-restore.test.ts.)
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecrets, runRostercal } from '../support/cli.ts';
import { type PulledSchool, schoolPulledByCli } from '../support/pulled-school.ts';

let school: PulledSchool;
let backup: string;

beforeAll(async () => {
  school = await schoolPulledByCli({ seed: 14, dirPrefix: 'rostercal-restore-' });
  const data = school.env.DATA_DIR!;
  if (!existsSync(join(data, 'feed-secret')))
    writeFileSync(join(data, 'feed-secret'), `${'s'.repeat(40)}\n`, { mode: 0o600 });
  backup = join(school.dir, '..', `${school.dir.split('/').at(-1)}-backup`);
  const made = await runRostercal(['backup', '--out', backup], school.env);
  expect(made.code, made.stderr).toBe(0);
}, 120_000);
afterAll(async () => {
  await school?.close();
  rmSync(backup, { recursive: true, force: true });
});

describe('rostercal restore', () => {
  it('--without-newer-record restores the school into an empty DATA_DIR and warns what that risks', async () => {
    const env = { ...school.env, DATA_DIR: join(backup, '..', `${backup.split('/').at(-1)}-restored`) };
    const r = await runRostercal(['restore', '--from', backup, '--without-newer-record'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^restored .* into .*-restored in [\d.]+ s: \d+ rotation\(s\) recorded, 0 rotation\(s\) made after the backup/,
    );
    expect(r.stderr).toContain('warning: no rotation record newer than the backup was given');
    const status = await runRostercal(['status', '--json'], env);
    expect(status.code, status.stderr).toBe(0);
    expect((JSON.parse(status.stdout) as { runs: { id: number; status: string }[] }).runs).toMatchObject([
      { id: 1, status: 'succeeded' },
    ]);
    expectNoSecrets(r.stdout + r.stderr, school.sandbox.token);
    rmSync(env.DATA_DIR, { recursive: true, force: true });
  });

  it('no --from, no backup there, no newer record, or a store in the way: exit 2 naming it, DATA_DIR untouched', async () => {
    const target = join(backup, '..', `${backup.split('/').at(-1)}-target`);
    const env = { ...school.env, DATA_DIR: target };
    const none = await runRostercal(['restore'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--from DIR is required');
    const empty = join(target, '..', `${backup.split('/').at(-1)}-empty`);
    mkdirSync(empty);
    const notBackup = await runRostercal(['restore', '--from', empty], env);
    expect(notBackup.code).toBe(2);
    expect(notBackup.stderr).toContain(`${empty} holds no rostercal backup (rostercal.sqlite)`);
    const noRecord = await runRostercal(['restore', '--from', backup], env);
    expect(noRecord.code).toBe(2);
    expect(noRecord.stderr).toContain('--record FILE');
    expect(noRecord.stderr).toContain('--without-newer-record');
    const missing = await runRostercal(
      ['restore', '--from', backup, '--record', join(empty, 'gone.jsonl')],
      env,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--record ${join(empty, 'gone.jsonl')}: no such file`);
    expect(existsSync(target)).toBe(false);
    const inTheWay = await runRostercal(['restore', '--from', backup, '--without-newer-record'], school.env);
    expect(inTheWay.code).toBe(2);
    expect(inTheWay.stderr).toMatch(/rostercal\.sqlite exists: stop serve and move it aside, then restore/);
    rmSync(empty, { recursive: true, force: true });
  });
});
