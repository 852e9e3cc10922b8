// The pull's spool: what a resource's download holds until its write. Past its memory budget it moves to a
// private temporary file that is already unlinked, and gives every record back once, in order.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { prepareRecord } from '../../src/store/kinds.ts';
import type { PreparedRecord } from '../../src/store/types.ts';
import { RecordSpool } from '../../src/sync/spool.ts';
import { until } from '../support/until.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(tmpdir(), 'spool-test-'));
  dirs.push(d);
  return d;
}

function record(id: number, note = ''): PreparedRecord {
  // Names in several scripts and a newline inside a value: the file's framing must survive both.
  return prepareRecord('students', {
    id,
    firstName: id % 2 ? 'Nguyễn' : '王',
    legalFirstName: null,
    lastName: `نور ${note}\nline two`,
    sisId: `S${id}`,
    secondarySisId: null,
    yearGroupId: 7,
    current: true,
  });
}

async function collect(spool: RecordSpool, size: number): Promise<PreparedRecord[][]> {
  const out: PreparedRecord[][] = [];
  for await (const chunk of spool.chunks(size)) out.push(chunk);
  return out;
}

describe('RecordSpool', () => {
  it('keeps a small download in memory and gives it back in chunks, in order', async () => {
    const dir = await tempDir();
    const spool = new RecordSpool({ dir });
    const records = Array.from({ length: 25 }, (_, i) => record(i + 1));
    await spool.add(records.slice(0, 10));
    await spool.add(records.slice(10));
    expect(spool.onDisk).toBe(false);
    const chunks = await collect(spool, 10);
    expect(chunks.map((c) => c.length)).toEqual([10, 10, 5]);
    expect(chunks.flat()).toEqual(records);
    expect(await readdir(dir)).toEqual([]);
    await spool.close();
  });

  it('ends a chunk at its text bound as well as its record count, from memory and from the file alike', async () => {
    const dir = await tempDir();
    const spool = new RecordSpool({ dir, memoryBytes: 5_000 });
    const records = Array.from({ length: 60 }, (_, i) => record(i + 1, 'y'.repeat(i % 7 === 0 ? 2_000 : 10)));
    await spool.add(records);
    expect(spool.onDisk).toBe(true);
    const chars = 1_500;
    const chunks: PreparedRecord[][] = [];
    for await (const chunk of spool.chunks(25, chars)) chunks.push(chunk);
    expect(chunks.flat()).toEqual(records);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(25);
      // Over the bound only by the record that reached it.
      const text = chunk.reduce((n, r) => n + r.data.length, 0);
      expect(text - chunk.at(-1)!.data.length).toBeLessThan(chars);
    }
    // A record larger than the bound is a chunk of its own: never an empty chunk, never a lost record.
    expect(chunks.some((c) => c.length === 1 && c[0]!.data.length > chars)).toBe(true);
    expect(chunks.every((c) => c.length > 0)).toBe(true);
    await spool.close();
  });

  it('moves to a file past its budget, leaves no file visible, and reads every record back exactly', async () => {
    const dir = await tempDir();
    const spool = new RecordSpool({ dir, memoryBytes: 2_000 });
    const records = Array.from({ length: 3_000 }, (_, i) => record(i + 1, 'x'.repeat(i % 300)));
    for (let i = 0; i < records.length; i += 100) await spool.add(records.slice(i, i + 100));
    expect(spool.onDisk).toBe(true);
    // Children's data: the file was unlinked as soon as it was opened.
    expect(await readdir(dir)).toEqual([]);
    const back = (await collect(spool, 700)).flat();
    expect(back.length).toBe(records.length);
    expect(back).toEqual(records);
    await spool.close();
  });

  it('reads back records larger than its file buffer, in any script, exactly', async () => {
    const spool = new RecordSpool({ dir: await tempDir(), memoryBytes: 1_000 });
    // 1.2 million two-byte characters: ~3.6 MB of UTF-8, more than the 1 MB the file is written and read by.
    const huge = record(2, '王'.repeat(1_200_000));
    const records = [record(1), huge, ...Array.from({ length: 400 }, (_, i) => record(i + 3, 'é'.repeat(i)))];
    await spool.add(records.slice(0, 1));
    await spool.add(records.slice(1));
    expect(spool.onDisk).toBe(true);
    expect((await collect(spool, 50)).flat()).toEqual(records);
    await spool.close();
  });

  it('writes a repeated record once, as it came last', async () => {
    const spool = new RecordSpool({ dir: await tempDir(), memoryBytes: 500 });
    const first = record(1, 'first');
    const other = record(2);
    const last = record(1, 'last');
    await spool.add([first, other]);
    await spool.add([last]);
    expect(spool.size).toBe(3);
    expect((await collect(spool, 10)).flat()).toEqual([other, last]);
    await spool.close();
  });

  it('is drained once, letting go of each record it kept in memory as it hands it out', async () => {
    const spool = new RecordSpool({ dir: await tempDir() });
    let held = Array.from({ length: 30 }, (_, i) => record(i + 1));
    await spool.add(held);
    const collected = new Set<number>();
    const watch = new FinalizationRegistry<number>((id) => collected.add(id));
    for (const r of held) watch.register(r, r.key as number);
    held = [];
    // Nothing but the spool refers to the records: those it has handed out (and the writer let go of) can be
    // collected while the drain goes on, before close().
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    // Finalisers run as tasks after a collection: collect and give the loop turns until they have run (how many
    // turns that takes depends on the machine, not on the spool), then say which records are still held.
    const collectedBefore = async (id: number) => {
      const missing = () => [...Array(id).keys()].map((i) => i + 1).filter((k) => !collected.has(k));
      await until(
        `records 1 to ${id} collected`,
        () => {
          gc();
          return missing().length === 0;
        },
        20_000,
        10,
      ).catch(() => {});
      return missing();
    };
    let seen = 0;
    for await (const chunk of spool.chunks(10)) {
      seen += chunk.length;
      // The chunk in hand is the writer's; every earlier one is gone.
      if (seen === 30) expect(await collectedBefore(20)).toEqual([]);
    }
    expect(seen).toBe(30);
    await expect(async () => {
      for await (const _ of spool.chunks(10)) void _;
    }).rejects.toThrow(/drained once/);
    await spool.close();
  });

  it('gives nothing back when nothing was added', async () => {
    const spool = new RecordSpool({ dir: await tempDir() });
    expect(await collect(spool, 10)).toEqual([]);
    await spool.close();
  });
});
