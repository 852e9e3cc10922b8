#!/usr/bin/env -S node --max-semi-space-size=8 --max-old-space-size=1536
// The `rostercal` command. Plain JavaScript on purpose: Node strips TypeScript with a WebAssembly module that it
// loads only for the first .ts file it meets, and its compile cache can only serve files loaded after the cache
// is on. Started from here, every .ts file of a command comes from the cache, and the stripper is never loaded:
// a school's `rostercal sync --full` measured faster and with less peak memory (bench:sync prints both).
// The cache is keyed by each file's content, so an edited file is compiled afresh. It lives in the OS temp
// directory (NODE_COMPILE_CACHE=dir chooses another, NODE_DISABLE_COMPILE_CACHE=1 turns it off); a cache that
// cannot be used costs nothing but the saving.
//
// The V8 flags on the first line (also in `npm start` and the Dockerfile; test/runtime-flags.test.ts keeps the
// three equal) bound the heap V8 lets garbage fill. V8 sizes the young generation by the machine's memory, and
// grows the old one by a larger factor the larger the heap limit; a pull's per-page garbage then raised a sync's
// peak memory well above what it holds. These flags keep it near what it holds at the same time at school scale
// (bench:sync prints the peak RSS; a larger or smaller limit measured no better). serve's largest footprint (a
// district's forced full re-render, on its worker thread) leaves each thread's heap well under the limit; one far
// larger raises it with `node --max-old-space-size=N bin/rostercal.js` (NODE_OPTIONS cannot: this line comes
// after it).
import { nodeVersionProblem } from './node-version.js';

const problem = nodeVersionProblem(process.versions.node, process.execPath);
if (problem) {
  process.stderr.write(problem);
  process.exit(1);
}
// Imported only once the version is known to have it (Node 20's `node:module` has no enableCompileCache).
const { enableCompileCache } = await import('node:module');
enableCompileCache();
await import('../src/main.ts');
