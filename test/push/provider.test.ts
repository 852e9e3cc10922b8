// The calendar provider's contract (push/provider.ts: Google's and Outlook's implement it; their tests are under
// test/push/google* and test/push/outlook*): its one helper, byKey, pairs a provider's answers with the calendars
// asked about, by position, under each calendar's key.
import { expect, it } from 'vitest';
import { byKey } from '../../src/push/provider.ts';

it('keys each answer by the calendar asked about in the same place', async () => {
  const asked = [{ key: 'team:7' }, { key: 'staff:40' }, { key: 'team:9' }];
  const answers = Promise.resolve([{ ok: true }, { ok: false }, { ok: true, created: true }]);
  const got = await byKey(asked, answers);
  expect([...got.entries()]).toEqual([
    ['team:7', { ok: true }],
    ['staff:40', { ok: false }],
    ['team:9', { ok: true, created: true }],
  ]);
  expect(await byKey([], Promise.resolve([]))).toEqual(new Map());
});

it('fails as the provider’s answers fail', async () => {
  await expect(byKey([{ key: 'team:7' }], Promise.reject(new Error('quota exceeded')))).rejects.toThrow(
    'quota exceeded',
  );
});
