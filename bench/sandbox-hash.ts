// node bench/sandbox-hash.ts: a sha256 of the sandbox's generated school (its JSON) for several seeds, scales and
// dates. Run it before and after touching src/sandbox/generate.ts: every line must print the same digest, since
// tests, benchmarks and the demo rely on the same inputs giving the same school.
import { createHash } from 'node:crypto';
import { generateSchool } from '../src/sandbox/index.ts';
import type { Scale } from '../src/sandbox/model.ts';

const CASES: readonly [number, Scale, string][] = [
  [1, 'small', '2026-03-02T00:00:00Z'],
  [9, 'small', '2026-11-23T01:00:00Z'],
  [42, 'small', '2026-07-15T06:30:00Z'],
  [1, 'school', '2026-03-02T00:00:00Z'],
  [42, 'school', '2026-11-23T01:00:00Z'],
  [7, 'school', '2027-01-10T12:00:00Z'],
  [3, 'district', '2026-09-01T00:00:00Z'],
];

const all = createHash('sha256');
for (const [seed, scale, now] of CASES) {
  const json = JSON.stringify(generateSchool(seed, scale, now));
  const digest = createHash('sha256').update(json).digest('hex');
  all.update(digest);
  console.log(
    `${String(seed).padStart(3)} ${scale.padEnd(8)} ${now}  ${String(json.length).padStart(10)} B  ${digest}`,
  );
}
console.log(`all ${all.digest('hex')}`);
