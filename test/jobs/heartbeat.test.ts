// This process as the owner of its runs, and its heartbeat in the store (jobs/heartbeat.ts), on a real SQLite
// store: one identity per process; the first beat written before keepAlive resolves (so a lease this process holds
// reads as held by a live owner at once); one beat timer per store however many hold it, stopped with the last;
// a beat the store refuses is logged and serving goes on.

import { hostname } from 'node:os';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keepAlive, processOwner } from '../../src/jobs/heartbeat.ts';
import { OWNER_BEAT_MS } from '../../src/store/liveness.ts';
import type { Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
let store: Store;
beforeEach(async () => {
  ts = await openTestStore('sqlite');
  store = ts.store;
});
afterEach(async () => {
  vi.useRealTimers();
  await ts.cleanup();
});

describe('processOwner', () => {
  it('is one identity for the process: host, pid and a random part', () => {
    const owner = processOwner();
    expect(processOwner()).toBe(owner);
    expect(owner.id).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{6}$`));
    expect(owner.pid).toBe(process.pid);
    expect(Date.parse(owner.startedAt)).not.toBeNaN();
  });
});

describe('keepAlive', () => {
  it('has beaten before it resolves: a lease this process holds is not taken over', async () => {
    const now = new Date().toISOString();
    expect((await store.runs.acquirePullLease('north', processOwner().id, now)).acquired).toBe(true);
    // Never beaten: the holder reads as gone, and another replica may take the lease.
    expect((await store.runs.acquirePullLease('north', 'other-replica', now)).acquired).toBe(true);
    expect((await store.runs.acquirePullLease('south', processOwner().id, now)).acquired).toBe(true);
    const release = await keepAlive(store);
    expect(
      await store.runs.acquirePullLease('south', 'other-replica', new Date().toISOString()),
    ).toMatchObject({
      acquired: false,
      holder: { owner: processOwner().id },
    });
    release();
  });

  it('keeps one beat timer per store, however many hold it, until the last lets go', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const first = await keepAlive(store);
    const second = await keepAlive(store);
    expect(vi.getTimerCount()).toBe(1);
    first();
    first(); // twice is once
    expect(vi.getTimerCount()).toBe(1);
    second();
    expect(vi.getTimerCount()).toBe(0);
    const again = await keepAlive(store);
    expect(vi.getTimerCount()).toBe(1);
    again();
  });

  it('beats again after OWNER_BEAT_MS, and logs a beat the store refuses', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const lines: string[] = [];
    const log = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const release = await keepAlive(store, log);
    await store.close();
    await vi.advanceTimersByTimeAsync(OWNER_BEAT_MS - 1);
    expect(lines).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await vi.waitFor(() => expect(lines).toHaveLength(1));
    expect(JSON.parse(lines[0]!).msg).toBe(
      'could not record this process as alive; its runs may read as interrupted',
    );
    release();
  });
});
