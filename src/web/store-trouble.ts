// What this process has seen of its store lately, for /readyz: whether the file is intact (checked now and then,
// off the event loop) and which writes the store has refused (a full disk, a read-only store). Serving never
// waits on a write: a request whose render could not be stored is answered from memory, and the refusal is
// told here, so that readiness says so at once instead of when the last success has grown old.
import { scrubSecrets } from '../log.ts';
import { isStoreUnreachable } from '../store/unreachable.ts';

/** How often the store's pages are all read again (SQLite quick_check). */
const INTEGRITY_EVERY_MS = 5 * 60_000;

function words(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return scrubSecrets(text.replace(/\w+:\/\/\S+/g, '<url>')).slice(0, 300);
}

/** SQLite: SQLITE_CORRUPT (11), SQLITE_NOTADB (26). PostgreSQL: data_corrupted, index_corrupted. */
function isDamage(err: unknown): boolean {
  const e = err as { errcode?: unknown; code?: unknown; message?: unknown } | null;
  if (typeof e?.errcode === 'number' && [11, 26].includes(e.errcode & 0xff)) return true;
  if (e?.code === 'XX001' || e?.code === 'XX002') return true;
  return typeof e?.message === 'string' && /disk image is malformed|file is not a database/.test(e.message);
}

export interface StoreTroubleOptions {
  /** The store's integrity check (Store.checkIntegrity): null when intact. */
  checkIntegrity: () => Promise<string | null>;
  integrityEveryMs?: number;
  now?: () => Date;
}

export class StoreTrouble {
  readonly #opts: StoreTroubleOptions;
  readonly #now: () => Date;
  /** By kind of write: the first refusal of the current streak and the latest error. */
  readonly #writes = new Map<string, { since: string; error: string; unreachable: boolean }>();
  #integrity: { at: number; damage: string | null } | null = null;
  #checking: Promise<string | null> | null = null;
  /** A request met damage while a check was under way (it may have read the pages before): check again. */
  #again = false;

  constructor(opts: StoreTroubleOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? (() => new Date());
  }

  /**
   * How a write of this kind went: its error, or null when it was written. Returns true when the store has just
   * started refusing this kind (the moment worth a log line; the rest of the streak is not).
   */
  write(kind: string, err: unknown): boolean {
    if (err === null || err === undefined) {
      this.#writes.delete(kind);
      return false;
    }
    const known = this.#writes.get(kind);
    this.#writes.set(kind, {
      since: known?.since ?? this.#now().toISOString(),
      error: words(err),
      unreachable: isStoreUnreachable(err),
    });
    return !known;
  }

  /**
   * The store answered again: a write it refused only because it could not be reached says nothing any more. Else
   * a replica healed from an outage stayed unready until a write of that kind happened to be made again (a render
   * is stored only when something changed: seen over 30 s after the database was back).
   */
  reached(): void {
    for (const [kind, w] of this.#writes) if (w.unreachable) this.#writes.delete(kind);
  }

  /** The writes the store refuses, one line each: `<kind> cannot be stored since <when>: <error>`. */
  writeProblems(): string[] {
    return [...this.#writes].map(([kind, w]) => `${kind} cannot be stored since ${w.since}: ${w.error}`);
  }

  /**
   * A request failed on this error. When it says the store is damaged (SQLite's corrupt or not-a-database
   * codes, PostgreSQL's data_corrupted/index_corrupted), readiness says so at once, and every page is checked
   * again now rather than at the next interval (whose answer then replaces this one).
   */
  requestFailed(err: unknown): void {
    if (!isDamage(err)) return;
    this.#integrity = { at: this.#now().getTime(), damage: `a read failed: ${words(err)}` };
    if (this.#checking) this.#again = true;
    else this.#recheck(true);
  }

  /**
   * What is damaged, or null. The first call waits for a check; later ones answer from the last check and start
   * the next one once it is older than the interval.
   */
  async damage(): Promise<string | null> {
    const every = this.#opts.integrityEveryMs ?? INTEGRITY_EVERY_MS;
    this.#recheck(!this.#integrity || this.#now().getTime() - this.#integrity.at >= every);
    if (this.#integrity) return this.#integrity.damage;
    return this.#checking;
  }

  #recheck(due: boolean): void {
    if (due && !this.#checking) {
      this.#checking = this.#opts
        .checkIntegrity()
        .catch((err: unknown) => `the integrity check failed: ${words(err)}`)
        .then((damage) => {
          if (!this.#again) this.#integrity = { at: this.#now().getTime(), damage };
          return damage;
        })
        .finally(() => {
          this.#checking = null;
          if (this.#again) {
            this.#again = false;
            this.#recheck(true);
          }
        });
    }
  }
}
