// rostercal's V8 flags (they bound a pull's memory: see bin/rostercal.js) are written in three places: the CLI's
// first line, `npm start`, and the Docker image's entrypoint. They must say the same, and all three start the CLI
// from bin/rostercal.js (the compile cache from the first module on).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { rostercalNodeFlags } from '../bench/support/node-flags.ts';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('the V8 flags rostercal runs with', () => {
  const flags = rostercalNodeFlags();

  it('are on the CLI’s first line', () => {
    expect(flags).toEqual(['--max-semi-space-size=8', '--max-old-space-size=1536']);
  });

  it('are the same for npm start', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    // exec: npm's shell becomes node, so npm's SIGTERM reaches it (test/readme-demo.test.ts).
    expect(start).toBe(`exec node ${flags.join(' ')} bin/rostercal.js serve --demo`);
  });

  it('are what npm installs as the rostercal command', () => {
    const bin = (JSON.parse(read('package.json')) as { bin: Record<string, string> }).bin;
    expect(bin).toEqual({ rostercal: './bin/rostercal.js' });
  });

  it('are the same in the Docker image', () => {
    const entry = /^ENTRYPOINT (.+)$/m.exec(read('Dockerfile'))?.[1];
    expect(JSON.parse(entry ?? 'null')).toEqual(['node', ...flags, 'bin/rostercal.js']);
  });
});
