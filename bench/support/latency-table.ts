// The table bench:feeds and bench:fleet print of feed and page latency, idle beside busy.
import { quantile } from './proc.ts';

/** Latencies (ms) of feed and page requests, each list ascending. */
export interface FeedAndPageLatencies {
  feed: number[];
  page: number[];
}

/**
 * Prints n, p50, p99 and max for feeds and pages, idle | busy, and busy p99 and max over idle's; answers whether
 * the goals held: busy p99 at most twice idle's, and the slowest busy request at most twice the slowest idle one
 * (both measured in the same run, so a loaded machine weighs on both sides).
 */
export function printIdleBusyTable(
  idle: FeedAndPageLatencies,
  busy: FeedAndPageLatencies,
): { ratioOk: boolean; maxOk: boolean } {
  const cols = (xs: number[]) =>
    [quantile(xs, 0.5), quantile(xs, 0.99), xs.at(-1) ?? 0].map((v) => v.toFixed(1).padStart(8)).join('');
  console.log(
    `${''.padEnd(14)}${'n'.padStart(7)}${'p50'.padStart(8)}${'p99'.padStart(8)}${'max'.padStart(8)}   |${'n'.padStart(7)}${'p50'.padStart(8)}${'p99'.padStart(8)}${'max'.padStart(8)}   | busy/idle p99   max`,
  );
  let ratioOk = true;
  let maxOk = true;
  for (const kind of ['feed', 'page'] as const) {
    const a = idle[kind];
    const b = busy[kind];
    const ratio = quantile(b, 0.99) / Math.max(0.001, quantile(a, 0.99));
    ratioOk &&= ratio <= 2;
    const maxRatio = (b.at(-1) ?? 0) / Math.max(0.001, a.at(-1) ?? 0);
    maxOk &&= maxRatio <= 2;
    console.log(
      `${`${kind} idle|busy`.padEnd(14)}${String(a.length).padStart(7)}${cols(a)} ms |${String(b.length).padStart(7)}${cols(b)} ms | ${`${ratio.toFixed(2)}×`.padStart(10)}${`${maxRatio.toFixed(2)}×`.padStart(7)}`,
    );
  }
  return { ratioOk, maxOk };
}
