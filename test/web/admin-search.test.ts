// GET /admin/search on `rostercal serve`: the school's search index is made after serve's start-up pull (and at
// a start on a store pulled before), not by the first admin who searches; who may search is unchanged.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Config, parseConfig } from '../../src/config.ts';
import { type RunningService, startService } from '../../src/running-service.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { freePort } from '../support/ports.ts';

const ADMIN = 'admin-search-index-token-0123456789abcdef';

describe('serve makes the admins’ search index before the first search', () => {
  let sandbox: Sandbox;
  let dir: string;
  let config: Omit<Config, 'publicUrl'>;
  let service: RunningService | undefined;
  let surname: string;

  const start = async (initialPull: boolean) => {
    const port = await freePort();
    // Links are built from PUBLIC_URL: here the server's own address.
    const publicUrl = `http://127.0.0.1:${port}`;
    return startService({
      config: { ...config, publicUrl },
      port,
      host: '127.0.0.1',
      adminToken: ADMIN,
      initialPull,
    });
  };
  const searchFor = (s: RunningService, q: string, token: string | null = ADMIN) =>
    fetch(`${s.url}/admin/search?${new URLSearchParams({ q })}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      redirect: 'manual',
    });

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 3, scale: 'small' });
    dir = mkdtempSync(path.join(tmpdir(), 'rostercal-admin-search-'));
    const parsed = parseConfig({
      dataDir: dir,
      schools: [
        {
          id: 'hill',
          name: 'Hillcrest College',
          upstream: { url: sandbox.url, token: sandbox.token },
          timeZone: sandbox.school.timeZone,
        },
      ],
    });
    config = { ...parsed, source: { kind: 'env' as const } };
  }, 60_000);

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('after the start-up pull, before any search; the first search makes none', async () => {
    service = await start(true);
    await service.initialPulls;
    const version = await service.store.records.subjectsVersion('hill');
    expect(version).toBeGreaterThan(0);
    expect(service.search.state('hill')).toEqual({ subjectsVersion: version, builds: 1 });
    surname = (await service.store.records.list('hill', 'students')).find((s) => s.current)!.lastName;
    const res = await searchFor(service, surname);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain(surname);
    expect(service.search.state('hill').builds).toBe(1);
    // Staff-only as before: no admin token, no answer and no names.
    const stranger = await searchFor(service, surname, null);
    expect(stranger.status).not.toBe(200);
    expect(await stranger.text()).not.toContain(surname);
    const wrong = await searchFor(service, surname, 'not-the-admin-token-0123456789abcdef');
    expect(wrong.status).not.toBe(200);
  }, 120_000);

  it('at a start on a store pulled before (no start-up pull), before any search', async () => {
    await service?.close();
    service = await start(false);
    const s = service;
    const version = await s.store.records.subjectsVersion('hill');
    await vi.waitFor(() => expect(s.search.state('hill').subjectsVersion).toBe(version), { timeout: 30_000 });
    expect(s.search.state('hill').builds).toBe(1);
    expect((await searchFor(s, surname)).status).toBe(200);
    expect(s.search.state('hill').builds).toBe(1);
  }, 60_000);

  it('each child found names their year and teams, so two children of one name can be told apart', async () => {
    const s = service!;
    const students = (await s.store.records.list('hill', 'students')).filter((x) => x.current);
    const years = new Map((await s.store.records.list('hill', 'yearGroups')).map((y) => [y.id, y.name]));
    const teams = await s.store.records.list('hill', 'teams');
    // The surname most children share: several hits of one kind, as two namesakes would be.
    const counts = new Map<string, number>();
    for (const x of students) counts.set(x.lastName, (counts.get(x.lastName) ?? 0) + 1);
    const shared = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const page = await (await searchFor(s, shared)).text();
    const hits = page
      .split('<li>')
      .slice(1)
      .filter((li) => li.includes('<span class="tag">student</span>'));
    expect(hits.length).toBeGreaterThan(1);
    for (const x of students.filter((y) => y.lastName === shared)) {
      const year = x.yearGroupId === null ? null : years.get(x.yearGroupId)!;
      const own = teams.filter((t) => t.students.some((m) => m.studentId === x.id)).map((t) => t.name);
      const line = `<span class="muted">${[year, own.length ? own.join(', ') : 'no team'].filter(Boolean).join(' · ')}</span>`;
      expect(
        hits.some((li) => li.includes(x.lastName) && li.includes(line)),
        `${x.firstName} ${x.lastName}: ${line}`,
      ).toBe(true);
    }
  }, 60_000);
});
