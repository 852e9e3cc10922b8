// Small async helpers for the pull: bounded parallel mapping, and reading one page ahead of the consumer so
// the next HTTP request is in flight while the store writes the current page.

/** Maps items with at most `limit` calls in flight; results keep the input order. The first failure rejects. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        results[i] = await fn(items[i] as T);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/** Yields what `source` yields, requesting item n+1 as soon as item n is handed out. */
export async function* prefetch<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let pending = it.next();
  try {
    while (true) {
      const r = await pending;
      if (r.done) return;
      pending = it.next();
      // A rejection of the read-ahead surfaces on the next await; keep it from counting as unhandled meanwhile.
      pending.catch(() => {});
      yield r.value;
    }
  } finally {
    // Stopping early (an error in the consumer): let the source clean up.
    await it.return?.(undefined);
  }
}
