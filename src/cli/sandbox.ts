// `rostercal sandbox`: the Extracurricular Data Service emulator alone, until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import type { Scale } from '../sandbox/index.ts';

const USAGE = `usage: rostercal sandbox [options]

Serves the whole Extracurricular Data Service API over HTTP, in memory, for a generated school.

options:
  --port N              port to listen on (default 4010; 0 = any free port)
  --host H              address to bind (default 127.0.0.1)
  --seed N              school generator seed (default 1)
  --scale S             small | school | district (default small)
  --token T             read-write bearer token (default sandbox-token)
  --readonly-token R    read-only bearer token (default sandbox-readonly-token)
  --now ISO             the sandbox clock's start (default: the real time)
  --rate-limit N/s      requests per second before 429 (default off), e.g. 10 or 10/s
  --burst N             requests allowed in a burst (default = the rate limit)
  --error-rate P        fraction 0..1 of requests answered with a 5xx
  --latency-ms N        delay added to every API response
  --malformed-rate P    fraction 0..1 of list records served malformed
  --listing-fault R=F   listing R (e.g. sessions) loses track of its pages: F = short (lastPage one less) or
                        overlap (each page repeats the previous page's last record); repeatable
  -h, --help            this help

Control routes (no token needed): GET /_sandbox/stats, POST /_sandbox/stats/reset, GET /_sandbox/health,
POST /_sandbox/chaos {"listingFaults": {"sessions": "short"}}`;

function number(name: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text.replace(/\/s$/, ''));
  if (text.trim() === '' || Number.isNaN(n) || n < min || n > max) {
    throw new Error(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return n;
}

export async function run(argv: string[]): Promise<number> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        seed: { type: 'string' },
        scale: { type: 'string' },
        token: { type: 'string' },
        'readonly-token': { type: 'string' },
        now: { type: 'string' },
        'rate-limit': { type: 'string' },
        burst: { type: 'string' },
        'error-rate': { type: 'string' },
        'latency-ms': { type: 'string' },
        'malformed-rate': { type: 'string' },
        'listing-fault': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    console.error(`rostercal sandbox: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const str = (k: string) => values[k] as string | undefined;
  let opts: Parameters<typeof import('../sandbox/index.ts').startSandbox>[0];
  try {
    const scale = str('scale') ?? 'small';
    if (!['small', 'school', 'district'].includes(scale))
      throw new Error(`--scale must be small, school or district, got ${scale}`);
    const now = str('now');
    if (now !== undefined && Number.isNaN(Date.parse(now)))
      throw new Error(`--now must be an ISO 8601 timestamp, got ${now}`);
    opts = {
      port: number('port', str('port'), 0, 65535) ?? 4010,
      host: str('host'),
      seed: number('seed', str('seed'), 0, 2 ** 32 - 1),
      scale: scale as Scale,
      token: str('token'),
      readonlyToken: str('readonly-token'),
      now,
      rateLimit: number('rate-limit', str('rate-limit'), 0, 1e6),
      burst: number('burst', str('burst'), 0, 1e6),
      errorRate: number('error-rate', str('error-rate'), 0, 1),
      latencyMs: number('latency-ms', str('latency-ms'), 0, 600_000),
      malformedRate: number('malformed-rate', str('malformed-rate'), 0, 1),
      listingFaults: Object.fromEntries(
        ((values['listing-fault'] as string[] | undefined) ?? []).map((pair) => {
          const [resource, fault] = pair.split('=');
          if (!resource || !fault) throw new Error(`--listing-fault must be RESOURCE=FAULT, got ${pair}`);
          return [resource, fault];
        }),
      ) as import('../sandbox/index.ts').ListingFaults,
    };
  } catch (err) {
    console.error(`rostercal sandbox: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  const { startSandbox } = await import('../sandbox/index.ts');
  const sandbox = await startSandbox(opts);
  const s = sandbox.school;
  console.log(
    [
      `sandbox listening on ${sandbox.url}`,
      `  token:           ${sandbox.token}`,
      `  read-only token: ${sandbox.readonlyToken}`,
      `  school: ${s.organisation.name} (seed ${s.seed}, scale ${s.scale}, now ${sandbox.now()}): ` +
        `${s.teams.length} teams, ${s.students.length} students, ${s.sessions.length} sessions`,
      `  stats:  ${sandbox.url}/_sandbox/stats`,
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sandbox.close();
  console.log('sandbox stopped');
  return 0;
}
