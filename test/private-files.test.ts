// Files with children's data are the service user's alone (private-files.ts): a directory made or found open is
// 0700, a file found open is 0600, a shared sticky directory such as /tmp is left as it is.
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePrivateDir, ensurePrivateFile } from '../src/private-files.ts';

let dir: string;
const mode = (p: string) => statSync(p).mode & 0o7777;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'rostercal-private-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('private files', () => {
  it('makes a new directory 0700 and narrows an open one', () => {
    const made = path.join(dir, 'new', 'data');
    ensurePrivateDir(made);
    expect(mode(made)).toBe(0o700);
    const open = path.join(dir, 'open');
    mkdirSync(open, { mode: 0o755 });
    ensurePrivateDir(open);
    expect(mode(open)).toBe(0o700);
  });

  it('narrows an open file to 0600, and passes over one that does not exist', () => {
    const file = path.join(dir, 'rostercal.sqlite');
    writeFileSync(file, 'x', { mode: 0o644 });
    ensurePrivateFile(file);
    expect(mode(file)).toBe(0o600);
    expect(() => ensurePrivateFile(path.join(dir, 'absent'))).not.toThrow();
  });

  it('leaves a shared sticky directory alone', () => {
    const before = mode(tmpdir());
    ensurePrivateDir(tmpdir());
    expect(mode(tmpdir())).toBe(before);
    const sticky = path.join(dir, 'sticky');
    mkdirSync(sticky, { mode: 0o777 });
    // mkdir's mode passes through the umask: set the sticky, world-writable bits as /tmp has them.
    chmodSync(sticky, 0o1777);
    ensurePrivateDir(sticky);
    expect(mode(sticky)).toBe(0o1777);
  });
});
