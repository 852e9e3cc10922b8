// Chromium starts without libfaketime: under it each navigation took seconds, so a run shifted in time to find the
// suite's dated failures timed out every browser test for that alone (running-service, landing-browser at +60 d).
import { describe, expect, it } from 'vitest';
import { browserEnv } from './browser.ts';

const FAKETIME_SO = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

describe('browserEnv', () => {
  it('drops libfaketime and its settings, keeps every other library and variable', () => {
    const env = browserEnv({
      LD_PRELOAD: `/opt/a.so:${FAKETIME_SO} /opt/b.so`,
      FAKETIME: '+60d',
      FAKETIME_NO_CACHE: '1',
      LD_LIBRARY_PATH: '/tmp/chromium/lib',
      FONTCONFIG_FILE: '/tmp/fonts.conf',
      UNSET: undefined,
    });
    expect(env).toEqual({
      LD_PRELOAD: '/opt/a.so:/opt/b.so',
      LD_LIBRARY_PATH: '/tmp/chromium/lib',
      FONTCONFIG_FILE: '/tmp/fonts.conf',
    });
  });

  it('leaves no empty LD_PRELOAD behind when libfaketime was all of it', () => {
    expect(browserEnv({ LD_PRELOAD: FAKETIME_SO, FAKETIME: '+400d', PATH: '/bin' })).toEqual({
      PATH: '/bin',
    });
  });
});
