// Preloaded (`node --import`) into every process bench:sync measures: at exit, writes the process's peak
// resident set size (KiB) to BENCH_RSS_FILE. Node reports no child's rusage, so each process tells its own.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
