// The key a throttle counts a client under. An IPv6 client is given a whole /64 (its provider's or its
// network's): it can pick any address in it at will (privacy extensions rotate them daily by themselves), so
// counting single addresses would give it 2^64 fresh allowances. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`,
// what a dual-stack socket reports for an IPv4 client) is that IPv4 address, and a port some proxies append to
// the address they forward (`a.b.c.d:port`, `[v6]:port`) is dropped, so a new connection is not a new client.
import { isIP } from 'node:net';

/** The throttling key of a client address: IPv4 as it is, IPv6 as its /64 (`2001:db8:0:1::/64`). */
export function addressKey(address: string): string {
  const bare = withoutPort(address.trim());
  const family = isIP(bare);
  if (family === 4) return bare;
  if (family !== 6) return bare;
  const hextets = expandIPv6(bare);
  if (hextets === null) return bare;
  const mapped = hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff;
  if (mapped) return [hextets[6]! >> 8, hextets[6]! & 0xff, hextets[7]! >> 8, hextets[7]! & 0xff].join('.');
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(':')}::/64`;
}

/** `a.b.c.d:port` → `a.b.c.d`; `[v6]:port` and `[v6]` → `v6`; a zone (`fe80::1%eth0`) is dropped too. */
function withoutPort(address: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  const inner = bracketed ? bracketed[1]! : address;
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(inner);
  if (v4WithPort) return v4WithPort[1]!;
  const zone = inner.indexOf('%');
  return zone === -1 ? inner : inner.slice(0, zone);
}

/** The eight 16-bit groups of a valid IPv6 address (`isIP` said so), an embedded IPv4 tail included. */
function expandIPv6(address: string): number[] | null {
  let text = address.toLowerCase();
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return null;
  const groups = [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right];
  return groups.map((g) => Number.parseInt(g, 16));
}
