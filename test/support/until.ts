// Waiting for what the product did rather than for a length of time: a test polls the state it can see (a feed's
// ETag, a store row, a fake's requests) until the awaited thing holds. The deadline only ends a test that would
// otherwise hang; it is generous, as the machine may be loaded, and measures nothing.

/** Polls `check` every `everyMs` until it holds; throws, naming `what`, after `ms`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  ms = 60_000,
  everyMs = 50,
): Promise<void> {
  await untilValue(what, async () => ((await check()) ? true : undefined), ms, everyMs);
}

/** Polls `check` until it returns a value (not undefined), and returns it; throws, naming `what`, after `ms`. */
export async function untilValue<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  ms = 60_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
