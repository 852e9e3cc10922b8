/**
 * The stored remote calendar id carries its owner (mailbox or delegated account) as `owner|id`, so a calendar
 * can still be reached after its member left the scope. Neither emails nor provider ids contain `|`.
 */
export function encodeCalendarId(owner: string | null, id: string): string {
  return owner ? `${owner}|${id}` : id;
}

export function decodeCalendarId(stored: string): { owner: string | null; id: string } {
  const bar = stored.indexOf('|');
  return bar < 0 ? { owner: null, id: stored } : { owner: stored.slice(0, bar), id: stored.slice(bar + 1) };
}
