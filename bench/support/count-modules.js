// Preloaded (`node --import`) by bench:start into one run of each command: at exit, writes to stderr how many
// modules the process loaded (every module through Node's loader: ours, packages', node: built-ins), with the
// packages that brought most, on a second line every package loaded (test/cli/light-commands.test.ts reads it),
// and on a third every file of src/ loaded (test/cli/production-loads.test.ts reads it). Plain JavaScript, like
// max-rss.js: a TypeScript preload would load the stripper.
import { registerHooks } from 'node:module';

const counts = new Map();
const sources = new Set();
registerHooks({
  load(url, context, nextLoad) {
    const own = /\/src\/(.+)$/.exec(url);
    if (own && !url.includes('/node_modules/')) sources.add(own[1]);
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    const key = url.startsWith('node:') ? 'node:' : (pkg ?? 'rostercal');
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return nextLoad(url, context);
  },
});
process.on('exit', () => {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const top = [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const packages = [...counts.keys()].filter((k) => k !== 'node:' && k !== 'rostercal').sort();
  process.stderr.write(
    `modules loaded: ${total} (${top})\npackages loaded: ${packages.join(' ')}\n` +
      `sources loaded: ${[...sources].sort().join(' ')}\n`,
  );
});
