// `rostercal roster` as a child process, on the SQLite store a real `rostercal sync` filled from the sandbox over
// HTTP: a team's roster as a PDF file (and to stdout), the download audited as the command line's, the templates
// listed, and bad input refused naming the option (exit 2) or the unknown team (exit 1), no file written.
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoSecrets, runRostercal } from '../support/cli.ts';
import { type PulledSchool, schoolPulledByCli } from '../support/pulled-school.ts';

let school: PulledSchool;
let team: { id: number; name: string };

beforeAll(async () => {
  school = await schoolPulledByCli({ seed: 15, dirPrefix: 'rostercal-roster-' });
  team = school.sandbox.school.teams.find((t) => !t.hidden)!;
}, 120_000);
afterAll(async () => {
  await school?.close();
});

describe('rostercal roster', () => {
  it("writes the team's roster PDF, says what it wrote, and audits the download", async () => {
    const file = join(school.dir, 'team.pdf');
    const r = await runRostercal(['roster', '--team', String(team.id), '-o', file], school.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^wrote ${file} \\(Team roster, ${team.name}, \\d+ bytes\\)\\n$`));
    expect(readFileSync(file).subarray(0, 5).toString()).toBe('%PDF-');
    expectNoSecrets(r.stderr, school.sandbox.token);
    const audit = await runRostercal(['audit', '--json', '--team', String(team.id)], school.env);
    expect(JSON.parse(audit.stdout)).toMatchObject([
      {
        action: 'roster',
        schoolId: 'hillcrest',
        teamId: team.id,
        template: 'team-roster',
        detail: 'rostercal roster',
      },
    ]);
  });

  it('-o - writes the PDF to stdout and nothing else', async () => {
    const r = await runRostercal(['roster', '--team', String(team.id), '-o', '-'], school.env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.startsWith('%PDF-')).toBe(true);
    expect(r.stderr).toBe('');
  });

  it('--templates lists the built-in templates with what each needs', async () => {
    const r = await runRostercal(['roster', '--templates'], school.env);
    expect(r.code, r.stderr).toBe(0);
    for (const name of [
      'team-roster',
      'attendance-sheet',
      'match-day-sheet',
      'medical-and-guardian-contacts',
    ])
      expect(r.stdout).toMatch(new RegExp(`^${name}\\s`, 'm'));
    expect(r.stdout).toMatch(/^attendance-sheet\s.*\[session: required\]$/m);
  });

  it('no -o, a bad --date, --all to stdout: exit 2 naming the option; an unknown team: exit 1, no file', async () => {
    const noOut = await runRostercal(['roster', '--team', String(team.id)], school.env);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toContain('say where the PDF goes: -o FILE.pdf');
    const date = await runRostercal(['roster', '--date', '2026-02-30', '-o', school.dir], school.env);
    expect(date.code).toBe(2);
    // In the form asked for, but no such day: said so, not "must be a day as YYYY-MM-DD".
    expect(date.stderr).toContain('--date is not a real date: "2026-02-30" (February 2026 has 28 days)');
    expect(date.stderr).not.toContain('must be a day as YYYY-MM-DD');
    const form = await runRostercal(['roster', '--date', '30/02/2026', '-o', school.dir], school.env);
    expect(form.code).toBe(2);
    expect(form.stderr).toContain('--date must be a day as YYYY-MM-DD, like 2026-12-02 (got "30/02/2026")');
    const all = await runRostercal(['roster', '--all', '-o', '-'], school.env);
    expect(all.code).toBe(2);
    expect(all.stderr).toContain('--all writes one file per team: -o must be a directory');
    const file = join(school.dir, 'unknown.pdf');
    const unknown = await runRostercal(['roster', '--team', '987654', '-o', file], school.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('987654');
    expect(existsSync(file)).toBe(false);
  });

  it('-o a symlink writes through it, a FIFO is written into, a directory is refused: none is replaced', async () => {
    const dir = join(school.dir, 'outputs');
    mkdirSync(dir);
    // A link to where the school keeps its printouts: the link stays, the file behind it gets the PDF.
    const target = join(dir, 'behind-the-link.pdf');
    const link = join(dir, 'latest.pdf');
    symlinkSync(target, link);
    const viaLink = await runRostercal(['roster', '--team', String(team.id), '-o', link], school.env);
    expect(viaLink.code, viaLink.stderr).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target).subarray(0, 5).toString()).toBe('%PDF-');
    // A pipe (as /dev/stdout or a printer spool would be): read from, not renamed over. As root, the same rename
    // made /dev/full a plain file.
    const fifo = join(dir, 'printer');
    execFileSync('mkfifo', [fifo]);
    const chunks: Buffer[] = [];
    const read = new Promise<void>((done, fail) => {
      createReadStream(fifo)
        .on('data', (c) => chunks.push(c as Buffer))
        .on('end', done)
        .on('error', fail);
    });
    const viaFifo = await runRostercal(['roster', '--team', String(team.id), '-o', fifo], school.env);
    expect(viaFifo.code, viaFifo.stderr).toBe(0);
    await read;
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(Buffer.concat(chunks).subarray(0, 5).toString()).toBe('%PDF-');
    const intoDir = await runRostercal(['roster', '--team', String(team.id), '-o', dir], school.env);
    expect(intoDir.code).toBe(2);
    expect(intoDir.stderr).toContain(`${dir} is a directory`);
    expect(lstatSync(dir).isDirectory()).toBe(true);
  });

  it('-o in a directory that does not exist, or a file name with --all or --date: exit 2 saying so, nothing made', async () => {
    const nowhere = join(school.dir, 'no-such-dir', 'x.pdf');
    const r = await runRostercal(['roster', '--team', String(team.id), '-o', nowhere], school.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${join(school.dir, 'no-such-dir')} does not exist`);
    expect(r.stderr).not.toContain('.tmp');
    for (const args of [['--all'], ['--date', '2026-03-02']]) {
      const file = join(school.dir, 'meant-as-a-file.pdf');
      const asFile = await runRostercal(['roster', ...args, '-o', file], school.env);
      expect(asFile.code, args[0]).toBe(2);
      expect(asFile.stderr).toContain('-o must be a directory (-o DIR/), got');
      expect(existsSync(file)).toBe(false);
    }
  });
});
