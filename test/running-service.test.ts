// The whole service as `rostercal serve` runs it: sandbox upstream → first pull → store → feeds, rosters and the
// staff dashboard on one web server; a person signs in with the admin token in a real browser.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config.ts';
import { type RunningService, startService } from '../src/running-service.ts';
import type { Sandbox } from '../src/sandbox/index.ts';
import { launchBrowser } from './support/browser.ts';
import { startWeekSandbox } from './support/clock.ts';
import { expectPdf } from './support/pdf.ts';
import { freePort } from './support/ports.ts';

const ADMIN_TOKEN = 'test-admin-token-4f9c2b7e1a';

describe('rostercal serve', () => {
  let sandbox: Sandbox;
  let service: RunningService;
  let dir: string;

  beforeAll(async () => {
    sandbox = await startWeekSandbox({ seed: 3, scale: 'small' });
    dir = mkdtempSync(path.join(tmpdir(), 'rostercal-service-'));
    const port = await freePort();
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
      // Prometheus reads /metrics on a listen address of its own, not on the families' port.
      metrics: { port: 0, host: '127.0.0.1' },
    });
    // Links are built from PUBLIC_URL: here the server's own address.
    const config = { ...parsed, publicUrl: `http://127.0.0.1:${port}`, source: { kind: 'env' as const } };
    service = await startService({
      config,
      port,
      host: '127.0.0.1',
      adminToken: ADMIN_TOKEN,
    });
    await service.initialPulls;
  });

  afterAll(async () => {
    await service?.close();
    await sandbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('pulls on start and reports healthy and ready', async () => {
    const runs = await service.store.runs.listRuns('hill');
    expect(runs[0]?.status).toBe('succeeded');
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status).toBe(200);
    expect((await fetch(`${service.url}/metrics`)).status).toBe(404);
    expect(service.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const metrics = await (await fetch(service.metricsUrl!)).text();
    expect(metrics).toMatch(/rostercal_sync_runs_total\{[^}]*status="succeeded"[^}]*\} 1/);
  });

  it('serves a working feed for each scope kind', async () => {
    const samples = await service.sampleFeeds();
    expect(samples.map((s) => s.scope).sort()).toEqual(['activity', 'staff', 'student', 'team']);
    for (const s of samples) {
      const res = await fetch(`${s.url}.ics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/calendar/);
      expect(await res.text()).toContain('BEGIN:VEVENT');
    }
  });

  it('keeps the dashboard and rosters to staff', async () => {
    const team = (await service.store.records.list('hill', 'teams')).find((t) => !t.hidden)!;
    for (const p of ['/admin', `/rosters/teams/${team.id}.pdf?template=team-roster`]) {
      const res = await fetch(`${service.url}${p}`);
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain(team.students[0]!.lastName);
    }
    const pdf = await fetch(`${service.url}/rosters/teams/${team.id}.pdf?template=team-roster`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
  });

  // The browser is this test's own: a Chromium that cannot start fails it, and only it.
  it('lets a person sign in, see sync status and feeds, and open a roster', async () => {
    const browser = await launchBrowser();
    const page = await browser.newPage();
    try {
      await page.goto(`${service.url}/admin/login?next=/admin`);
      await page.fill('input[name="token"]', ADMIN_TOKEN);
      await Promise.all([page.waitForURL(`${service.url}/admin`), page.click('button[type="submit"]')]);
      await expect(page.locator('h2').first().textContent()).resolves.toContain('Hillcrest College');
      const body = (await page.textContent('body')) ?? '';
      expect(body).toContain('succeeded');

      const href = await page
        .locator('a', { hasText: /^Roster$/ })
        .first()
        .getAttribute('href');
      expect(href).toBeTruthy();
      const pdf = await page.request.get(href!);
      expect(pdf.status()).toBe(200);
      expectPdf(await pdf.body());

      // A team's calendar, found with /admin's search box.
      const team = (await service.store.records.list('hill', 'teams')).find((t) => !t.hidden)!;
      await page.fill('#q', team.name);
      await Promise.all([
        page.waitForURL(/\/admin\/search\?/),
        page.locator('form[role=search] button').click(),
      ]);
      const feedHref = await page.locator('a', { hasText: 'subscribe page' }).first().getAttribute('href');
      const landing = await page.goto(feedHref!);
      expect(landing?.status()).toBe(200);
      // The family's page with its subscribe button (no QR code here: a phone cannot reach 127.0.0.1).
      expect(await page.locator('a.btn.primary').count()).toBe(1);
    } finally {
      await browser.close();
    }
  });
});
