// A school's own event wording: a directory named by the configuration (eventTemplatesDir) or the environment
// (EVENT_TEMPLATES_DIR), read once by loadConfig; files it lacks fall back to the built-in wording, a bad template
// stops start-up naming the file and the key, and feeds, landing pages, pushes and rosters all say the same.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEventTemplates } from '../../src/calendar/templates.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { type RunningService, startService } from '../../src/running-service.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { rostercal } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { pdfText } from '../support/pdf.ts';

const tmp = mkdtempSync(path.join(tmpdir(), 'rostercal-wording-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function wordingDir(name: string, files: Record<string, unknown>): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  for (const [file, content] of Object.entries(files))
    writeFileSync(path.join(dir, file), typeof content === 'string' ? content : JSON.stringify(content));
  return dir;
}

const builtIn = loadEventTemplates();

describe('eventTemplatesDir', () => {
  it('EVENT_TEMPLATES_DIR: default.json for every school, <schoolId>.json for one, the rest built in', async () => {
    const dir = wordingDir('env', {
      'default.json': { title: { cancelled: 'Called off: {title}' } },
      'demo.json': { description: { cancelled: 'No session today.' } },
    });
    const cfg = await loadConfig({ EVENT_TEMPLATES_DIR: dir });
    const t = cfg.schools[0]!.eventTemplates!;
    expect(cfg.eventTemplatesDir).toBe(dir);
    expect(t.title.cancelled).toBe('Called off: {title}');
    expect(t.description.cancelled).toBe('No session today.');
    expect(t.title.session).toBe(builtIn.title.session);
    expect(t.result).toEqual(builtIn.result);
  });

  it('without a directory every school has the built-in wording', async () => {
    const cfg = await loadConfig({});
    expect(cfg.eventTemplatesDir).toBeUndefined();
    expect(cfg.schools[0]!.eventTemplates).toEqual(builtIn);
  });

  it('the config file names it (relative to the working directory); the environment wins', async () => {
    const fromFile = wordingDir('file', { 'default.json': { title: { draft: 'DRAFT {title}' } } });
    const fromEnv = wordingDir('env2', { 'default.json': { title: { draft: 'ENTWURF {title}' } } });
    const file = path.join(tmp, 'rostercal.json');
    writeFileSync(
      file,
      JSON.stringify({
        eventTemplatesDir: path.relative(process.cwd(), fromFile),
        schools: [
          {
            id: 'hill',
            name: 'Hill',
            upstream: { url: 'https://api.example', token: 'x' },
            timeZone: 'Europe/London',
          },
        ],
      }),
    );
    const a = await loadConfig({ ROSTERCAL_CONFIG: file });
    expect(a.eventTemplatesDir).toBe(fromFile);
    expect(a.schools[0]!.eventTemplates!.title.draft).toBe('DRAFT {title}');
    const b = await loadConfig({ ROSTERCAL_CONFIG: file, EVENT_TEMPLATES_DIR: fromEnv });
    expect(b.schools[0]!.eventTemplates!.title.draft).toBe('ENTWURF {title}');
  });

  it('a bad template or a missing directory stops loadConfig naming the setting, the file and the key', async () => {
    const bad = wordingDir('bad', { 'demo.json': { title: { bye: '{nmae}: bye' } } });
    const err = await loadConfig({ EVENT_TEMPLATES_DIR: bad }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('EVENT_TEMPLATES_DIR');
    expect((err as Error).message).toContain(path.join(bad, 'demo.json'));
    expect((err as Error).message).toMatch(/title\.bye: unknown placeholder \{nmae\}/);

    const broken = wordingDir('broken', { 'default.json': '{"title": ' });
    await expect(loadConfig({ EVENT_TEMPLATES_DIR: broken })).rejects.toThrow(
      new RegExp(`${path.join(broken, 'default.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: .*JSON`),
    );
    const unknownKey = wordingDir('unknown', { 'default.json': { title: { sesion: '{named}' } } });
    await expect(loadConfig({ EVENT_TEMPLATES_DIR: unknownKey })).rejects.toThrow(/title: .*sesion/);

    const missing = path.join(tmp, 'no-such-dir');
    await expect(loadConfig({ EVENT_TEMPLATES_DIR: missing })).rejects.toThrow(
      `config: EVENT_TEMPLATES_DIR: ${missing} is not a directory`,
    );
  });

  it('the CLI exits 2 at start-up, naming the file and the key', async () => {
    const bad = wordingDir('cli', { 'default.json': { description: { staff: 'Coaches: {name}' } } });
    const child = rostercal(['feeds', 'list'], {
      EVENT_TEMPLATES_DIR: bad,
      DATA_DIR: path.join(tmp, 'cli-data'),
    });
    expect(await child.exit).toBe(2);
    expect(child.output()).toContain(path.join(bad, 'default.json'));
    expect(child.output()).toMatch(/description\.staff: unknown placeholder \{name\}/);
  });
});

describe('one wording for feeds, landing pages, pushes and rosters', () => {
  const MARK = '(HC wording)';
  const ADMIN = 'wording-admin-token-8d1e-5c7a9f3b2e4d6a';
  let sandbox: Sandbox;
  let google: FakeGoogle;
  let service: RunningService;

  beforeAll(async () => {
    [sandbox, google] = await Promise.all([startWeekSandbox({ seed: 5, scale: 'small' }), startFakeGoogle()]);
    const dir = wordingDir('service', {
      // Every kind of title (a session's, a fixture's, a bye's) marked; results, cancellations and drafts wrap them.
      'default.json': {
        title: Object.fromEntries(
          ['session', 'fixture', 'fixtureHome', 'fixtureAway', 'fixtureNamed', 'fixtureNamedHome']
            .concat(['fixtureNamedAway', 'fixtureNoOpponent', 'bye'])
            .map((k) => [k, `${builtIn.title[k as 'session']} ${MARK}`]),
        ),
      },
    });
    const file = path.join(tmp, 'service.json');
    writeFileSync(
      file,
      JSON.stringify({
        dataDir: path.join(tmp, 'service-data'),
        eventTemplatesDir: dir,
        schools: [
          {
            id: 'hill',
            name: 'Hillcrest College',
            upstream: { url: sandbox.url, token: sandbox.token },
            timeZone: sandbox.school.timeZone,
            targets: [
              {
                id: 'teams',
                provider: 'google',
                scope: 'team',
                google: {
                  rootUrl: google.url,
                  auth: { accessToken: google.token },
                  writesPerSecond: 2000,
                  backoff: { baseMs: 2, capMs: 20, maxRetries: 12 },
                },
              },
            ],
          },
        ],
      }),
    );
    const config = await loadConfig({ ROSTERCAL_CONFIG: file });
    service = await startService({ config, port: 0, host: '127.0.0.1', adminToken: ADMIN });
    await service.initialPulls;
  }, 120_000);
  afterAll(async () => {
    await service?.close();
    await google?.close();
    await sandbox?.close();
  });

  it('every title carries the school’s wording wherever it is shown', async () => {
    const [team] = (await service.sampleFeeds()).filter((f) => f.scope === 'team');
    expect(team, 'a team feed with events').toBeDefined();
    const local = team!.url.replace(/^https?:\/\/[^/]+/, service.url);
    // Unfolded (RFC 5545 §3.1): a long SUMMARY continues on the next line.
    const ics = (await (await fetch(`${local}.ics`)).text()).replace(/\r\n[ \t]/g, '');
    const summaries = [...ics.matchAll(/^SUMMARY:(.*)$/gm)].map((m) => m[1]!);
    expect(summaries.length).toBeGreaterThan(0);
    for (const s of summaries) expect(s).toContain(MARK);

    const page = await (await fetch(local)).text();
    expect(page).toContain(MARK);

    await expect.poll(() => google.calendars().length, { timeout: 60_000 }).toBeGreaterThan(0);
    const pushed = google.calendars().flatMap((c) => google.liveEvents(c.id).map((e) => e.summary ?? ''));
    expect(pushed.length).toBeGreaterThan(0);
    for (const s of pushed) expect(s).toContain(MARK);

    const teams = await service.store.records.list('hill', 'teams');
    let pdf: Response | null = null;
    for (const t of teams) {
      pdf = await fetch(`${service.url}/rosters/teams/${t.id}.pdf?template=attendance-sheet`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      if (pdf.status === 200) break;
    }
    expect(pdf?.status).toBe(200);
    expect(await pdfText(new Uint8Array(await pdf!.arrayBuffer()))).toContain(MARK);
  }, 120_000);
});
