// `rostercal sync`'s terminal output reads as text: its log lines (pino's JSON) came out between the progress and
// the summary (an outside tester), on a terminal or in a pipe. As a child process with its output piped: a pull
// that fails (an upstream on a port fetch refuses) logs errors, which read as plain lines naming the command.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRostercal, writeSchoolConfig } from '../support/cli.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-sync-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rostercal sync', () => {
  it('prints no raw JSON log line among its progress and summary', async () => {
    const config = writeSchoolConfig(dir, 'http://127.0.0.1:9/', []);
    const r = await runRostercal(['sync'], {
      ROSTERCAL_CONFIG: config,
      HILL_TOKEN: 'token-0123456789abcdef',
      PUBLIC_URL: 'https://cal.example.org',
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/full pull FAILED/);
    const lines = `${r.stdout}\n${r.stderr}`.split('\n');
    expect(lines.filter((l) => /^\s*\{/.test(l))).toEqual([]);
    // The log's word is still there, as text: what failed, for which school.
    expect(r.stderr).toMatch(/^rostercal sync: error: .*pull failed.*school hill/m);
  });
});
