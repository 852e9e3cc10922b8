// Cookies and where sign-in goes next (identity/cookies.ts): the first cookie of a name wins, decoded; only a
// same-site absolute path is followed, never another host however it is spelt.
import { describe, expect, it } from 'vitest';
import { cookieOf, localPath } from '../../src/identity/cookies.ts';

const req = (cookie?: string) => ({ headers: cookie === undefined ? {} : { cookie } });

describe('a request’s cookie', () => {
  it('is decoded, the first of a name wins, and a missing one is undefined', () => {
    expect(cookieOf(req('a=1; sid=x%20y; sid=late'), 'sid')).toBe('x y');
    expect(cookieOf(req('a=1'), 'sid')).toBeUndefined();
    expect(cookieOf(req(), 'sid')).toBeUndefined();
  });
});

describe('the path after sign-in', () => {
  it('follows a same-site absolute path, query and fragment included', () => {
    expect(localPath('/staff/sessions/12?x=1#top')).toBe('/staff/sessions/12?x=1#top');
    expect(localPath('/admin', '/')).toBe('/admin');
  });

  it('falls back for anything that could leave the site, or is not a path', () => {
    for (const bad of [
      '//evil.example/x',
      'https://evil.example/',
      '/\\evil.example',
      '/ /evil.example',
      '/\t/evil.example',
      'staff',
      '',
      `/${'a'.repeat(2000)}`,
      42,
      undefined,
    ])
      expect(localPath(bad), String(bad)).toBe('/staff');
    expect(localPath('//evil.example', '/home')).toBe('/home');
  });
});
