// Preloaded (`node --import`) into every process bench:sync measures: at exit, writes the process's peak
// resident set size (KiB) and the CPU time it used (user + system, ms) to BENCH_RSS_FILE as JSON. Node reports
// no child's rusage, so each process tells its own. CPU time is the steadier figure on a shared machine, where a
// process's wall time depends on who else has the cores. Plain JavaScript, like bin/rostercal.js: a TypeScript
// preload would make Node load its type stripper (~45 ms, ~20 MB) into every process measured, the product's and
// the floor's alike.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_RSS_FILE;
if (file) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      file,
      JSON.stringify({ maxRssKb: u.maxRSS, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }),
    );
  });
}
