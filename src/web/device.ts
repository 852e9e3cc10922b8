// Which kind of device asks for a landing page, from its User-Agent: enough to put the subscribe button that
// works there first (iPhone and iPad: the built-in Calendar through webcal; Android: Google Calendar, which
// the phone's calendar app shows; a computer: Google Calendar in the browser, or Apple Calendar on a Mac).
// iPadOS Safari says "Macintosh": webcal is right for it as for a Mac, so the two need not be told apart.
export type Device = 'ios' | 'android' | 'mac' | 'desktop';

export function deviceOf(userAgent: string | undefined): Device {
  const ua = userAgent ?? '';
  if (/\b(iPhone|iPad|iPod)\b/.test(ua)) return 'ios';
  if (/\bAndroid\b/.test(ua)) return 'android';
  if (/\bMacintosh\b/.test(ua)) return 'mac';
  return 'desktop';
}
