// `rostercal backup` while `serve` answers feeds, restored into an empty DATA_DIR served on another port (issue
// 44): every feed URL `feeds list` printed answers with the same bytes, and a URL rotated before the backup
// stays dead. Real CLI children throughout.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rostercal } from '../support/cli.ts';
import { type PrivacySchool, privacySchool, serve, tokenOf } from './served.ts';

let school: PrivacySchool;
const dirs: string[] = [];

beforeAll(async () => {
  school = await privacySchool(44);
}, 180_000);
afterAll(async () => {
  await school?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function bytes(base: string, url: string): Promise<{ status: number; body: Buffer }> {
  const res = await fetch(`${base}${new URL(url).pathname.replace(/(\.ics)?$/, '.ics')}`);
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

describe('backup while serving, restore elsewhere', () => {
  it('every feed URL answers with the same bytes; a rotated one stays dead', async () => {
    const rotated = school.feeds.find((f) => f.scope === 'student')!;
    const rotate = rostercal(['feeds', 'rotate', 'student', String(rotated.id)], school.env);
    expect(await rotate.exit, rotate.output()).toBe(0);
    const list = rostercal(['feeds', 'list', '--json'], school.env);
    expect(await list.exit).toBe(0);
    const feeds = JSON.parse(list.stdout()) as PrivacySchool['feeds'];
    const first = await serve(school);
    const before = new Map<string, Buffer>();
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'rostercal-backup-')), 'backup');
    dirs.push(path.dirname(out));
    try {
      for (const f of feeds) {
        const r = await bytes(first.url, f.url);
        expect(r.status, f.url).toBe(200);
        before.set(f.url, r.body);
      }
      // Taken while serve runs and answers.
      const [backup] = await Promise.all([
        (async () => {
          const b = rostercal(['backup', '--out', out], school.env);
          expect(await b.exit, b.output()).toBe(0);
          return b.output();
        })(),
        ...feeds.slice(0, 20).map((f) => bytes(first.url, f.url)),
      ]);
      expect(backup).toMatch(
        /backup written to .* in [\d.]+ s: rostercal\.sqlite, feed-rotations\.jsonl, feed-secret \([\d.]+ MB\)/,
      );
      expect(backup).not.toMatch(/\/feeds\/[A-Za-z0-9_-]{32}/);
    } finally {
      await first.stop();
    }

    const restored = mkdtempSync(path.join(tmpdir(), 'rostercal-restored-'));
    dirs.push(restored);
    for (const f of readdirSync(out)) copyFileSync(path.join(out, f), path.join(restored, f));
    mkdirSync(restored, { recursive: true });
    const second = await serve({ ...school, env: { ...school.env, DATA_DIR: restored }, dataDir: restored });
    try {
      for (const f of feeds) {
        const r = await bytes(second.url, f.url);
        expect(r.status, f.url).toBe(200);
        expect(r.body.equals(before.get(f.url)!), `${f.scope} ${f.id}: the same bytes`).toBe(true);
      }
      const dead = await fetch(`${second.url}/feeds/${tokenOf(rotated.url)}.ics`);
      expect(dead.status).toBe(404);
    } finally {
      await second.stop();
    }
  }, 240_000);
});
