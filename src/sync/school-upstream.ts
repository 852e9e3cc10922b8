// The upstream client of a configured school, and the demo school's in-process sandbox.
import type { Config, SchoolConfig } from '../config.ts';
import { DEMO_SANDBOX } from '../config.ts';
import { type Logger, silentLogger } from '../log.ts';
import type { UpstreamClient } from '../upstream/api.ts';
import { createUpstreamClient } from '../upstream/client.ts';

/** One client per school: its pacing (requests per second, in flight) holds across the runs that share it. */
export function clientForSchool(school: SchoolConfig, log: Logger = silentLogger): UpstreamClient {
  const clientLog = log.child({ schoolId: school.id, component: 'upstream' });
  const { upstream } = school;
  return createUpstreamClient({
    baseUrl: upstream.url,
    token: upstream.token,
    ...(upstream.rateLimit ? { rateLimit: upstream.rateLimit } : {}),
    ...(upstream.backoff ? { backoff: upstream.backoff } : {}),
    ...(upstream.timeoutMs ? { timeoutMs: upstream.timeoutMs } : {}),
    onRetry: (info) =>
      clientLog.info(
        { endpoint: info.endpoint, retry: info.retry, waitMs: info.waitMs, status: info.status },
        `retrying ${info.endpoint}: ${info.reason}`,
      ),
  });
}

export interface DemoUpstream {
  /** The configuration with every demo school pointed at the running sandbox. */
  config: Config;
  /** The sandbox's address, or null when no school is a demo school (then close() does nothing). */
  url: string | null;
  close(): Promise<void>;
}

/**
 * Starts the in-process sandbox when the configuration has demo schools, and points them at it. The sandbox
 * generates the same school (seed, scale) on every start, around the current time.
 */
export async function startDemoUpstream(config: Config, opts: { port?: number } = {}): Promise<DemoUpstream> {
  if (!config.schools.some((s) => s.demo)) return { config, url: null, close: async () => {} };
  // Loaded only when needed: production deployments never pay for the generator.
  const { startSandbox } = await import('../sandbox/index.ts');
  const sandbox = await startSandbox({
    port: opts.port ?? 0,
    seed: DEMO_SANDBOX.seed,
    scale: DEMO_SANDBOX.scale,
    token: DEMO_SANDBOX.token,
    // SANDBOX_NOW: the school is built around the instant serve's clock starts at.
    ...(config.sandboxNow ? { now: config.sandboxNow } : {}),
  });
  const schools = config.schools.map((s) =>
    s.demo ? { ...s, upstream: { ...s.upstream, url: sandbox.url, token: sandbox.token } } : s,
  );
  return { config: { ...config, schools }, url: sandbox.url, close: () => sandbox.close() };
}
