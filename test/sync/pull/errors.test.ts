// How a pull ends without a summary, and how an upstream failure is judged (sync/pull/errors.ts): failures that the
// next resource would meet as well end the pull; an abort ends a wait at once and leaves the work to settle.
import { describe, expect, it } from 'vitest';
import {
  abortReason,
  isFatal,
  isNotFound,
  message,
  PullBusyError,
  PullNotNeededError,
  unlessAborted,
} from '../../../src/sync/pull/errors.ts';
import {
  ForbiddenError,
  NotFoundError,
  ServerError,
  UnauthorizedError,
  UnreachableError,
  UpstreamDownError,
} from '../../../src/upstream/errors.ts';

describe('which upstream failures end the pull', () => {
  it('ends it on a refused token, an unreachable or down service, and a listing’s 404', () => {
    const down = new ServerError('GET /sessions', 503, 'down', true);
    expect(isFatal(new UnauthorizedError('GET /sessions', 401, 'no'))).toBe(true);
    expect(isFatal(new ForbiddenError('GET /teams', 403, 'no'))).toBe(true);
    expect(isFatal(new UnreachableError('GET /sessions', 'http://127.0.0.1:9', 'ECONNREFUSED'))).toBe(true);
    expect(isFatal(new UpstreamDownError('GET /sessions', down, 60_000))).toBe(true);
    expect(isFatal(new NotFoundError('GET /sessions', 404, 'no such path'))).toBe(true);
  });

  it('goes on to the next resource after one record’s 404 or a server error', () => {
    expect(isFatal(new NotFoundError('GET /teams/42', 404, 'gone'))).toBe(false);
    expect(isFatal(new ServerError('GET /sessions', 500, 'oops', true))).toBe(false);
    expect(isFatal(new Error('bug'))).toBe(false);
    expect(isFatal(null)).toBe(false);
    expect(isNotFound(new NotFoundError('GET /teams/42', 404, 'gone'))).toBe(true);
    expect(isNotFound(new ServerError('GET /teams/42', 500, 'oops', true))).toBe(false);
    expect(message(new Error('said'))).toBe('said');
    expect(message('plain')).toBe('plain');
  });
});

describe('how a pull ends without a summary', () => {
  it('names who holds the lease, and which full pull did the work', () => {
    const busy = new PullBusyError('hill', { owner: 'host:42', since: '2026-03-02T10:00:00.000Z' });
    expect(busy.message).toBe('a pull of hill is already running (host:42, since 2026-03-02T10:00:00.000Z)');
    expect(new PullNotNeededError('hill', null).message).toBe(
      'a full pull of hill that began after this fire',
    );
    const run = { id: 12, owner: null, startedAt: '2026-03-02T10:00:00.000Z' } as ConstructorParameters<
      typeof PullNotNeededError
    >[1];
    expect(new PullNotNeededError('hill', run).message).toBe(
      'full pull #12 of hill (another process, started 2026-03-02T10:00:00.000Z), which began after this fire',
    );
  });

  it('says why it was stopped', () => {
    const c = new AbortController();
    expect(abortReason(c.signal)).toBe('stopped');
    c.abort('shutting down');
    expect(abortReason(c.signal)).toBe('shutting down');
    const e = new AbortController();
    e.abort(new Error('SIGTERM'));
    expect(abortReason(e.signal)).toBe('SIGTERM');
  });

  it('stops waiting as soon as the signal aborts, and passes the work’s own result through otherwise', async () => {
    await expect(unlessAborted(Promise.resolve(1), undefined)).resolves.toBe(1);
    await expect(unlessAborted(Promise.resolve(2), new AbortController().signal)).resolves.toBe(2);
    await expect(
      unlessAborted(Promise.reject(new Error('failed')), new AbortController().signal),
    ).rejects.toThrow('failed');
    const never = new Promise<number>(() => {});
    const c = new AbortController();
    const waiting = unlessAborted(never, c.signal);
    c.abort('stop');
    await expect(waiting).rejects.toBe('stop');
    const already = new AbortController();
    already.abort('before');
    await expect(unlessAborted(never, already.signal)).rejects.toBe('before');
  });
});
