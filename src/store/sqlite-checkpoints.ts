// WAL checkpoints off the event loop. SQLite copies its write-ahead log back into the database on the commit that
// takes the log past 1,000 pages, in the committing connection: after a district's sessions (~170 MB of log) that
// is one synchronous call of ~0.8 s, during which a `serve` answers nothing. With a checkpointer, the writer's
// automatic checkpoints are off and a worker thread with its own connection runs a PASSIVE checkpoint after each
// write, on the other core. Should the worker fail to start or die, the writer's automatic checkpoints come back,
// so the log never grows without bound.
import type { DatabaseSync } from 'node:sqlite';
import { Worker } from 'node:worker_threads';

/** SQLite's default wal_autocheckpoint, restored when the worker is gone. */
const AUTO_CHECKPOINT_PAGES = 1000;
const STOP_WAIT_MS = 2_000;

export class Checkpointer {
  readonly #writer: DatabaseSync;
  readonly #file: string;
  #worker: Worker | null = null;
  #exited = false;
  /** The worker failed or was stopped: the writer checkpoints for itself from now on. */
  #gone = false;
  #ready = false;
  /** A checkpoint is asked for and not yet done: requests until then are the same request. */
  #outstanding = false;
  #wanted = false;

  /** For the writer connection `writer` of `file`; the worker starts with the first request. */
  constructor(writer: DatabaseSync, file: string) {
    this.#writer = writer;
    this.#file = file;
  }

  /** Whether checkpoints run on the worker (false until it is up, and after it is gone). */
  get active(): boolean {
    return this.#ready && !this.#gone;
  }

  /** Whether the worker has gone (it failed, or stop() was called): from then on the writer checkpoints itself. */
  get gone(): boolean {
    return this.#gone;
  }

  /** Asks for a checkpoint soon (a write has committed). Cheap: at most one is outstanding. */
  request(): void {
    if (this.#gone) return;
    if (!this.#worker) this.#worker = this.#startWorker();
    if (!this.#ready || this.#outstanding) {
      this.#wanted = true;
      return;
    }
    this.#wanted = false;
    this.#outstanding = true;
    this.#worker.postMessage('checkpoint');
  }

  /** Lets the worker finish its checkpoint and close its connection; the writer checkpoints for itself again. */
  async stop(): Promise<void> {
    const worker = this.#worker;
    this.#fallBack();
    if (!worker || this.#exited) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), STOP_WAIT_MS);
    });
    if ((await Promise.race([exited, late])) === 'late') await worker.terminate();
    clearTimeout(timer);
  }

  #startWorker(): Worker {
    const worker = new Worker(new URL('./sqlite-checkpoint-worker.ts', import.meta.url), {
      workerData: { file: this.#file },
    });
    // Never what keeps a process alive: a checkpoint cut short by an exit is one SQLite recovers from.
    worker.unref();
    worker.on('message', (message: unknown) => {
      if (this.#gone) return;
      if (message === 'ready') {
        this.#ready = true;
        this.#writer.exec('PRAGMA wal_autocheckpoint = 0');
      } else this.#outstanding = false;
      if (this.#wanted) this.request();
    });
    worker.on('error', () => this.#fallBack());
    worker.on('exit', () => {
      this.#exited = true;
      this.#fallBack();
    });
    return worker;
  }

  #fallBack(): void {
    if (this.#gone) return;
    this.#gone = true;
    if (!this.#ready) return;
    try {
      this.#writer.exec(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
    } catch {
      // The writer is closed already: nothing more will be written through it.
    }
  }
}
