// The table bench:feeds and bench:fleet print of feed and page latency, idle beside busy.
import { quantile } from './proc.ts';

/** Latencies (ms) of feed and page requests, each list ascending. */
export interface FeedAndPageLatencies {
  feed: number[];
  page: number[];
}

/**
 * Prints n, p50, p99 and max for feeds and pages, idle | busy, and busy p99 over idle p99; answers whether the
 * goals held: busy p99 at most twice idle's, and no busy request over 250 ms.
 */
export function printIdleBusyTable(
  idle: FeedAndPageLatencies,
  busy: FeedAndPageLatencies,
): { ratioOk: boolean; maxOk: boolean } {
  const cols = (xs: number[]) =>
    [quantile(xs, 0.5), quantile(xs, 0.99), xs.at(-1) ?? 0].map((v) => v.toFixed(1).padStart(8)).join('');
  console.log(
    `${''.padEnd(14)}${'n'.padStart(7)}${'p50'.padStart(8)}${'p99'.padStart(8)}${'max'.padStart(8)}   |${'n'.padStart(7)}${'p50'.padStart(8)}${'p99'.padStart(8)}${'max'.padStart(8)}   | p99 busy/idle`,
  );
  let ratioOk = true;
  let maxOk = true;
  for (const kind of ['feed', 'page'] as const) {
    const a = idle[kind];
    const b = busy[kind];
    const ratio = quantile(b, 0.99) / Math.max(0.001, quantile(a, 0.99));
    ratioOk &&= ratio <= 2;
    maxOk &&= (b.at(-1) ?? 0) <= 250;
    console.log(
      `${`${kind} idle|busy`.padEnd(14)}${String(a.length).padStart(7)}${cols(a)} ms |${String(b.length).padStart(7)}${cols(b)} ms | ${ratio.toFixed(2)}×`,
    );
  }
  return { ratioOk, maxOk };
}
