// `rostercal sandbox`: the Extracurricular Data Service emulator alone, until SIGINT/SIGTERM.
import type { Scale } from '../sandbox/index.ts';
import { printLines } from '../terminal.ts';
import { defineCommand, EXIT, numberOption, UsageError } from './command.ts';

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
  --listing-fault R=F   listing R (e.g. sessions) loses track of its pages: F = short (lastPage one less),
                        overlap (each page repeats the previous page's last record) or truncated (the last
                        page is lost and numRecords lowered to match; one page loses its last record); repeatable
  -h, --help            this help

Control routes (no token needed): GET /_sandbox/stats, POST /_sandbox/stats/reset, GET /_sandbox/health,
POST /_sandbox/chaos {"listingFaults": {"sessions": "short"}}`;

function rangeOption(name: string, text: string | undefined, min: number, max: number): number | undefined {
  return numberOption(`--${name}`, text, { min, max, integer: false });
}

export const run = defineCommand({
  name: 'sandbox',
  usage: USAGE,
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
  },
  async run({ values }) {
    const scale = values.scale ?? 'small';
    if (!['small', 'school', 'district'].includes(scale))
      throw new UsageError(`--scale must be small, school or district, got ${scale}`);
    const now = values.now;
    if (now !== undefined && Number.isNaN(Date.parse(now)))
      throw new UsageError(`--now must be an ISO 8601 timestamp, got ${now}`);
    const opts = {
      port: numberOption('--port', values.port, { max: 65535 }) ?? 4010,
      host: values.host,
      seed: numberOption('--seed', values.seed, { max: 2 ** 32 - 1 }),
      scale: scale as Scale,
      token: values.token,
      readonlyToken: values['readonly-token'],
      now,
      rateLimit: rangeOption('rate-limit', values['rate-limit'], 0, 1e6),
      burst: rangeOption('burst', values.burst, 0, 1e6),
      errorRate: rangeOption('error-rate', values['error-rate'], 0, 1),
      latencyMs: rangeOption('latency-ms', values['latency-ms'], 0, 600_000),
      malformedRate: rangeOption('malformed-rate', values['malformed-rate'], 0, 1),
      listingFaults: Object.fromEntries(
        (values['listing-fault'] ?? []).map((pair) => {
          const [resource, fault] = pair.split('=');
          if (!resource || !fault)
            throw new UsageError(`--listing-fault must be RESOURCE=FAULT, got ${pair}`);
          return [resource, fault];
        }),
      ) as import('../sandbox/index.ts').ListingFaults,
    };
    return serveSandbox(opts);
  },
});

async function serveSandbox(opts: Parameters<typeof import('../sandbox/index.ts').startSandbox>[0]) {
  const { startSandbox } = await import('../sandbox/index.ts');
  const sandbox = await startSandbox(opts);
  const s = sandbox.school;
  printLines([
    `sandbox listening on ${sandbox.url}`,
    `  token:           ${sandbox.token}`,
    `  read-only token: ${sandbox.readonlyToken}`,
    `  school: ${s.organisation.name} (seed ${s.seed}, scale ${s.scale}, now ${sandbox.now()}): ` +
      `${s.teams.length} teams, ${s.students.length} students, ${s.sessions.length} sessions`,
    `  stats:  ${sandbox.url}/_sandbox/stats`,
  ]);
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
  printLines('sandbox stopped');
  return EXIT.ok;
}
