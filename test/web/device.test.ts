// Which device a page is for (web/device.ts): it picks the subscribe instructions a family sees first.
import { describe, expect, it } from 'vitest';
import { deviceOf } from '../../src/web/device.ts';

describe('the device of a user agent', () => {
  it('tells iPhones and iPads, Android, Macs, and everything else', () => {
    expect(deviceOf('Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15')).toBe(
      'ios',
    );
    expect(deviceOf('Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X)')).toBe('ios');
    expect(deviceOf('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36')).toBe('android');
    expect(deviceOf('Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15')).toBe('mac');
    expect(deviceOf('Mozilla/5.0 (Windows NT 10.0; Win64; x64)')).toBe('desktop');
    expect(deviceOf(undefined)).toBe('desktop');
    // A word inside another is not the device.
    expect(deviceOf('Androidish/1.0 iPhoneless')).toBe('desktop');
  });
});
