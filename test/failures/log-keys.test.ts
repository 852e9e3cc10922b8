// Every JSON log line names each key once. Log tools disagree on a repeated key (some keep the first, some the
// last), and JSON.parse hides the repetition: the raw text of real processes' logs is read here, key by key.
// `serve` (scheduler, pull, upstream retries against a sandbox that fails 20 % of requests) and `sync` (a
// resource that fails, a push a provider refuses) at LOG_LEVEL=debug.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { freePort } from '../support/ports.ts';

/** The keys of every object in one JSON text that appear more than once in that object (path: key). */
function repeatedKeys(text: string): string[] {
  const repeated: string[] = [];
  let i = 0;
  const ws = () => {
    while (/\s/.test(text[i] ?? '')) i++;
  };
  const str = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (path: string): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const key = str();
        if (seen.has(key)) repeated.push(`${path}${key}`);
        seen.add(key);
        ws();
        i++; // ':'
        value(`${path}${key}.`);
        ws();
        if (text[i++] === '}') return;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(`${path}[].`);
        ws();
        if (text[i++] === ']') return;
      }
    }
    if (c === '"') {
      str();
      return;
    }
    while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
  };
  value('');
  return repeated;
}

function jsonLines(output: string): string[] {
  return output.split('\n').filter((l) => l.startsWith('{"level"'));
}

function expectNoRepeatedKeys(output: string): void {
  const lines = jsonLines(output);
  expect(lines.length, output).toBeGreaterThan(0);
  const bad = lines
    .map((l) => ({ line: l, keys: repeatedKeys(l) }))
    .filter((x) => x.keys.length > 0)
    .map((x) => `${x.keys.join(', ')} in ${x.line}`);
  expect(bad, bad.join('\n')).toEqual([]);
}

describe('log lines name each key once', () => {
  let sandbox: Sandbox;
  let google: FakeGoogle;
  let root: string;
  beforeAll(async () => {
    [sandbox, google] = await Promise.all([
      startWeekSandbox({ seed: 5, scale: 'small', errorRate: 0.2 }),
      startFakeGoogle(),
    ]);
    root = mkdtempSync(join(tmpdir(), 'rostercal-log-keys-'));
  });
  afterAll(async () => {
    await Promise.all([sandbox?.close(), google?.close()]);
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('the checker finds a repeated key, at any depth', () => {
    expect(repeatedKeys('{"a":1,"b":{"c":[{"d":1,"d":2}]},"a":"x\\"y"}')).toEqual(['b.c.[].d', 'a']);
    expect(repeatedKeys('{"a":{"a":1},"b":[1,"a"]}')).toEqual([]);
  });

  it('serve: scheduler, pull and upstream retries', async () => {
    const env = {
      ...schoolEnv(sandbox, { DATA_DIR: join(root, 'serve') }),
      PORT: String(await freePort()),
      LOG_LEVEL: 'debug',
    };
    const child = rostercal(['serve'], env);
    onTestFinished(() => void child.proc.kill('SIGKILL'));
    await child.waitFor(/"msg":"start-up pull finished"/, 120_000);
    child.proc.kill('SIGTERM');
    await child.ended;
    expect(child.output()).toMatch(/"msg":"retrying GET /);
    expectNoRepeatedKeys(child.output());
  }, 180_000);

  it('sync: a failed resource and a refused push', async () => {
    const file = join(root, 'config.json');
    writeFileSync(
      file,
      JSON.stringify({
        dataDir: join(root, 'sync'),
        publicUrl: 'https://calendars.hill.example',
        schools: [
          {
            id: 'hill',
            name: 'Hill School',
            timeZone: 'Australia/Sydney',
            upstream: { url: sandbox.url, token: 'env:HILL_TOKEN', backoff: { baseMs: 10, maxRetries: 0 } },
            targets: [
              {
                id: 'teams',
                provider: 'google',
                scope: 'team',
                google: { rootUrl: google.url, auth: { accessToken: 'env:GOOGLE_TOKEN' } },
              },
            ],
          },
        ],
      }),
    );
    google.knobs.faults = [{ status: 401 }];
    const child = rostercal(['sync', '--full'], {
      ROSTERCAL_CONFIG: file,
      HILL_TOKEN: sandbox.token,
      GOOGLE_TOKEN: google.token,
      LOG_LEVEL: 'debug',
    });
    expect(await child.exit, child.output()).toBe(1);
    // sync's log is text since 0a0d330 (its stderr is read by a person): each line says where once, in words
    // ("(school hill, run 1, resource activities)"); the JSON lines' keys are held by serve's case above.
    const lines = child
      .output()
      .split('\n')
      .filter((l) => l.startsWith('rostercal sync: '));
    expect(
      lines.some((l) => /^rostercal sync: \w+: pull of \w+ failed/.test(l)),
      child.output(),
    ).toBe(true);
    expect(
      lines.some((l) => /^rostercal sync: info: push finished/.test(l)),
      child.output(),
    ).toBe(true);
    const twice = lines.filter((l) => {
      const words = (/ \(([^()]*)\)(: |$)/.exec(l)?.[1] ?? '').split(', ').map((w) => w.split(' ')[0]);
      return new Set(words).size !== words.length;
    });
    expect(twice).toEqual([]);
    expect(child.output()).not.toMatch(/^\{"level"/m);
  }, 180_000);
});
