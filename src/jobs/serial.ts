// Work that must not overlap inside this process, per key (a school's pulls, a target's pushes): each key's runs go
// one after the other in the order asked for. Across processes and replicas the store's leases order them too.

export class SerialQueues {
  /** Per key: the last run asked for (running or waiting its turn). */
  readonly #tails = new Map<string, Promise<unknown>>();
  /** Per key and join group: the run waiting its turn, not yet begun. */
  readonly #waiting = new Map<string, Promise<unknown>>();
  readonly #asked = new Map<string, number>();

  /** Whether a run of `key` is going or waiting. */
  busy(key: string): boolean {
    return (this.#asked.get(key) ?? 0) > 0;
  }

  /**
   * Runs `fn` once every run of `key` asked for before it has ended, whatever their results. With `joinAs`, a run
   * asked for while another of the same key and group waits its turn is that one: it begins after every caller that
   * joined it asked, so it carries what each of them wanted (callers of one group ask for the same work).
   */
  run<T>(key: string, fn: () => Promise<T>, joinAs?: string): Promise<T> {
    const group = joinAs === undefined ? null : `${key}\u0000${joinAs}`;
    // The run a caller of this group started: its type is this group's (see above).
    const queued = group === null ? undefined : (this.#waiting.get(group) as Promise<T> | undefined);
    if (queued) return queued;
    this.#asked.set(key, (this.#asked.get(key) ?? 0) + 1);
    const next = (this.#tails.get(key) ?? Promise.resolve())
      .catch(() => {})
      .then(() => {
        if (group !== null && this.#waiting.get(group) === next) this.#waiting.delete(group);
        return fn();
      })
      .finally(() => {
        const left = (this.#asked.get(key) ?? 1) - 1;
        if (left > 0) this.#asked.set(key, left);
        else this.#asked.delete(key);
        if (this.#tails.get(key) === next) this.#tails.delete(key);
      });
    if (group !== null) this.#waiting.set(group, next);
    this.#tails.set(key, next);
    return next;
  }
}
