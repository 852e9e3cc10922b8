// A real headless Chromium for tests: the npm package's (@sparticuz/chromium) unless CHROMIUM_PATH names another,
// launched through playwright-core with flags that work as root and on a machine with no network. A Chromium that
// cannot start is a test failure that names it, never a skip.
import { type Browser, chromium, type LaunchOptions } from 'playwright-core';
import { installChromium } from './chromium.ts';

export type { Browser, BrowserContext, Page } from 'playwright-core';

const ARGS = [
  // Root (CI, containers) cannot use Chromium's sandbox; the pages are our own.
  '--no-sandbox',
  '--no-zygote',
  // Nothing leaves the machine: no updates, field trials, metrics, safe-browsing lists or DNS prefetching.
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-domain-reliability',
  '--disable-sync',
  '--no-pings',
  '--metrics-recording-only',
  '--disable-breakpad',
  '--dns-prefetch-disable',
  '--no-first-run',
  '--no-default-browser-check',
  // Containers often have a tiny /dev/shm.
  '--disable-dev-shm-usage',
  // Software rendering only (SwiftShader ships in the package); the same pixels on every machine.
  '--disable-gpu',
  '--font-render-hinting=none',
];

async function executable(): Promise<{ path: string; env: Record<string, string>; source: string }> {
  if (process.env.VITEST) {
    const { inject } = await import('vitest');
    const prepared = inject('chromium');
    if (prepared) {
      if ('error' in prepared) throw new Error(prepared.error);
      return prepared;
    }
  }
  const install = await installChromium();
  return { path: install.executablePath, env: install.env, source: install.source };
}

/**
 * The environment Chromium starts with: `env` less libfaketime. A run shifted in time (LD_PRELOAD=libfaketime.so.1
 * FAKETIME=+60d, to find the dates the suite fails on) shifts the product in this process and its children; Chromium
 * under libfaketime took 6–14 s to load a one-line page (150 ms without it, and as slow at FAKETIME=+0d), so every
 * browser test timed out on that alone. Chromium keeps the real clock then: the pages' dates are the server's.
 */
export function browserEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !/^FAKETIME/.test(k)) out[k] = v;
  if (out.LD_PRELOAD !== undefined) {
    const kept = out.LD_PRELOAD.split(/[: ]/).filter((lib) => lib && !/libfaketime/.test(lib));
    if (kept.length) out.LD_PRELOAD = kept.join(':');
    else delete out.LD_PRELOAD;
  }
  return out;
}

/** Launches headless Chromium; throws "Chromium (…) could not start: …" when it cannot. Close it in afterAll. */
export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const exe = await executable();
  try {
    return await chromium.launch({
      headless: true,
      timeout: 60_000,
      ...options,
      executablePath: exe.path,
      args: [...ARGS, ...(options.args ?? [])],
      env: browserEnv({ ...process.env, ...exe.env, ...options.env }),
    });
  } catch (err) {
    throw new Error(`Chromium (${exe.source}: ${exe.path}) could not start: ${(err as Error).message}`);
  }
}
