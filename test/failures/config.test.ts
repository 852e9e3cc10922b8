// Configuration traps, tried through the real `rostercal` CLI: what cannot work is refused at start with the
// field named (exit 2), before anything runs.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { rostercal } from './cli.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rostercal-config-traps-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function configFile(outlook: Record<string, unknown>): string {
  const name = `school-${n++}`;
  const file = join(dir, `${name}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      dataDir: join(dir, name),
      publicUrl: 'https://calendars.hill.example',
      schools: [
        {
          id: 'hill',
          name: 'Hill School',
          upstream: { url: 'http://127.0.0.1:9/', token: 'x' },
          timeZone: 'Australia/Sydney',
          targets: [{ id: 'staff', provider: 'outlook', scope: 'staff', outlook }],
        },
      ],
    }),
  );
  return file;
}

describe('Outlook URLs that cannot work', () => {
  const app = { tenantId: 't', clientId: 'c', clientSecret: 's' };
  const cases: [field: string, url: string, outlook: Record<string, string>][] = [
    ['authorityHost', 'http://login.example.com', app],
    ['authorityHost', 'http://127.0.0.1:8443', app],
    ['baseUrl', 'http://graph.example.com', { accessToken: 't' }],
  ];
  for (const [field, url, rest] of cases) {
    const outlook = { ...rest, [field]: url };
    it(`${field} ${url}: sync exits 2 naming the field`, async () => {
      const child = rostercal(['sync'], { ROSTERCAL_CONFIG: configFile(outlook) });
      onTestFinished(() => void child.proc.kill());
      expect(await child.exit, child.output()).toBe(2);
      expect(child.output()).toMatch(
        new RegExp(`schools\\[0\\]\\.targets\\[0\\]\\.outlook\\.${field}: must be an https:// URL`),
      );
      expect(child.output()).not.toMatch(/\n\s+at /);
    });
  }
});
