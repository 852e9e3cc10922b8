// Where a resource's download waits for its write. A pull must not hold a write transaction across network
// waits, so a resource is downloaded whole before it is written; held in memory, that made the pull's peak
// memory grow with the school (a district's sessions: ~100 MB of JSON, several times that as JS strings). The
// spool keeps up to `memoryBytes` of records in memory and appends the rest to a private temporary file that
// is unlinked at once (nothing of it outlives the process, whatever ends it), then hands them back in
// bounded chunks for the write, oldest first, each record's last occurrence only.

import type { FileHandle } from 'node:fs/promises';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PRIVATE_FILE_MODE } from '../private-files.ts';
import type { PreparedRecord } from '../store/types.ts';

export interface SpoolOptions {
  /** Records kept in memory before the spool moves to disk (default 4 MB of record text). */
  memoryBytes?: number;
  /** Directory of the temporary file (default: the OS temp directory). */
  dir?: string;
}

// 4 MB of text (up to twice that as two-byte strings): a school's whole sessions listing (~3.3 MB) stays in
// memory, a district's goes to the file sooner. Full syncs of a district into PostgreSQL, three rounds
// alternating: 8 MB 280–307 MB peak, 4 MB 262–275 MB, 2 MB 251–270 MB (with up to 1 s more CPU); into SQLite
// 260–268 → 246–263 MB; a school's time and peak unchanged.
const DEFAULT_MEMORY_BYTES = 4 * 1024 * 1024;
/** Bytes written to or read from the file at a time. */
const IO_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** Put in place of a record the spool has handed out, so that the record can be collected once written. */
const RELEASED: PreparedRecord = { key: '', data: '', hash: '', extras: {}, members: [] };

/** What a record's header line carries; its `data` follows on a line of its own (stable JSON has no newline). */
interface Header {
  k: PreparedRecord['key'];
  h: string;
  e: PreparedRecord['extras'];
  m: PreparedRecord['members'];
}

export class RecordSpool {
  readonly #memoryBytes: number;
  readonly #dir: string;
  #memory: PreparedRecord[] = [];
  #memoryUsed = 0;
  #file: FileHandle | null = null;
  #fileBytes = 0;
  /** Encoded records waiting to be written to the file: one buffer, reused for every write and the read back. */
  #buffer: Buffer | null = null;
  #buffered = 0;
  #count = 0;
  #drained = false;
  /** Index of each key's last occurrence: a listing that repeats a record writes it once, as it came last. */
  readonly #last = new Map<PreparedRecord['key'], number>();

  constructor(opts: SpoolOptions = {}) {
    this.#memoryBytes = opts.memoryBytes ?? DEFAULT_MEMORY_BYTES;
    this.#dir = opts.dir ?? tmpdir();
  }

  /** Records added (repeats included). */
  get size(): number {
    return this.#count;
  }

  /** Whether the spool has moved to disk. */
  get onDisk(): boolean {
    return this.#file !== null;
  }

  async add(records: readonly PreparedRecord[]): Promise<void> {
    for (const r of records) {
      this.#last.set(r.key, this.#count++);
      if (!this.#file && this.#memoryUsed + r.data.length <= this.#memoryBytes) {
        this.#memory.push(r);
        this.#memoryUsed += r.data.length;
        continue;
      }
      if (!this.#file) await this.#onDisk(() => this.#moveToDisk());
      await this.#append(r);
    }
  }

  /**
   * Every record once (its last occurrence), in the order added, in chunks of at most `records` records and at
   * most `chars` characters of record text (a chunk holds at least one record). Records read back from the file
   * are new strings, so the text bound is what bounds the write's memory (larger chunks raised a district sync's
   * peak, which bench:sync prints). A spool is drained once: it lets go of each record kept in memory as it hands
   * it out, so the write's peak does not hold the whole in-memory part (two-byte strings, twice the size of their
   * text) until the last chunk. A second call is an error, never a silently shorter listing.
   */
  async *chunks(records: number, chars = Number.POSITIVE_INFINITY): AsyncGenerator<PreparedRecord[]> {
    if (this.#drained) throw new Error('a pull spool is drained once: its records were already handed out');
    this.#drained = true;
    const memory = this.#memory;
    this.#memory = [];
    this.#memoryUsed = 0;
    let index = 0;
    let chunk: PreparedRecord[] = [];
    let chunkChars = 0;
    const take = (r: PreparedRecord): boolean => {
      if (this.#last.get(r.key) !== index++) return false;
      chunk.push(r);
      chunkChars += r.data.length;
      return chunk.length >= records || chunkChars >= chars;
    };
    const cut = (): PreparedRecord[] => {
      const full = chunk;
      chunk = [];
      chunkChars = 0;
      return full;
    };
    for (let i = 0; i < memory.length; i++) {
      const r = memory[i]!;
      memory[i] = RELEASED;
      if (take(r)) yield cut();
    }
    if (this.#file) {
      await this.#onDisk(() => this.#flush());
      for await (const r of this.#readBack()) if (take(r)) yield cut();
    }
    if (chunk.length > 0) yield cut();
  }

  async close(): Promise<void> {
    this.#memory = [];
    this.#buffer = null;
    this.#buffered = 0;
    this.#last.clear();
    const file = this.#file;
    this.#file = null;
    await file?.close();
  }

  /** File trouble (a full or read-only temp directory) said as what it is, with the place an operator can change. */
  async #onDisk<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(`cannot keep the download in a temporary file under ${this.#dir} (TMPDIR): ${why}`, {
        cause: err,
      });
    }
  }

  async #moveToDisk(): Promise<void> {
    // A private directory of our own (0700), the file 0600 inside it, both gone from the file system at once:
    // children's data never sits where another user could open it, and a killed process leaves nothing behind.
    const dir = await mkdtemp(path.join(this.#dir, 'rostercal-pull-'));
    try {
      this.#file = await open(path.join(dir, 'spool'), 'w+', PRIVATE_FILE_MODE);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * Encodes a record into the write buffer, writing the buffer to the file first when the record might not fit.
   * Straight into one reused buffer: joining the records' text and encoding it anew for each write cost a
   * district's sessions ~0.2 s of CPU and ~1 MB of allocations per write.
   */
  async #append(r: PreparedRecord): Promise<void> {
    const header: Header = { k: r.key, h: r.hash, e: r.extras, m: r.members };
    const head = JSON.stringify(header);
    // At most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units), and two newlines.
    const most = (head.length + r.data.length) * 3 + 2;
    if (this.#buffered + most > IO_BYTES) await this.#onDisk(() => this.#flush());
    if (most > IO_BYTES) {
      // A record larger than the buffer (none a school has) is written on its own.
      await this.#onDisk(() => this.#write(Buffer.from(`${head}\n${r.data}\n`, 'utf8')));
      return;
    }
    this.#buffer ??= Buffer.allocUnsafeSlow(IO_BYTES);
    const buffer = this.#buffer;
    let at = this.#buffered;
    at += buffer.write(head, at, 'utf8');
    buffer[at++] = NEWLINE;
    at += buffer.write(r.data, at, 'utf8');
    buffer[at++] = NEWLINE;
    this.#buffered = at;
  }

  async #flush(): Promise<void> {
    if (this.#buffered === 0 || !this.#buffer) return;
    await this.#write(this.#buffer.subarray(0, this.#buffered));
    this.#buffered = 0;
  }

  async #write(bytes: Buffer): Promise<void> {
    if (!this.#file) return;
    let written = 0;
    while (written < bytes.length) {
      const { bytesWritten } = await this.#file.write(
        bytes,
        written,
        bytes.length - written,
        this.#fileBytes,
      );
      written += bytesWritten;
      this.#fileBytes += bytesWritten;
    }
  }

  /** The file's records in order, read through the same buffer a block at a time. */
  async *#readBack(): AsyncGenerator<PreparedRecord> {
    const file = this.#file;
    if (!file) return;
    let buffer = this.#buffer ?? Buffer.allocUnsafeSlow(IO_BYTES);
    this.#buffer = null;
    let position = 0;
    // Bytes at the buffer's start that belong to a line not yet complete.
    let kept = 0;
    let header: Header | null = null;
    while (position < this.#fileBytes) {
      if (kept === buffer.length) {
        // One line longer than the buffer: a larger one, the partial line moved into it.
        const larger = Buffer.allocUnsafeSlow(buffer.length * 2);
        buffer.copy(larger, 0, 0, kept);
        buffer = larger;
      }
      const want = Math.min(buffer.length - kept, this.#fileBytes - position);
      const { bytesRead } = await file.read(buffer, kept, want, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const filled = buffer.subarray(0, kept + bytesRead);
      let start = 0;
      for (let nl = filled.indexOf(NEWLINE, start); nl !== -1; nl = filled.indexOf(NEWLINE, start)) {
        const line = filled.toString('utf8', start, nl);
        start = nl + 1;
        if (header === null) header = JSON.parse(line) as Header;
        else {
          yield { key: header.k, hash: header.h, extras: header.e, members: header.m, data: line };
          header = null;
        }
      }
      buffer.copy(buffer, 0, start, filled.length);
      kept = filled.length - start;
    }
    if (kept > 0 || header !== null) throw new Error('the pull spool file ended in the middle of a record');
  }
}
