// A free TCP port on loopback, for servers that must know their own address before they listen (a public URL,
// an identity provider's redirect URI). The one copy the suite uses.
import { readFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';

/**
 * Ports below the kernel's ephemeral range. A port the kernel handed out for port 0 and that was closed again is
 * free for every outgoing connection of every process until the server binds it: a whole run (CI of 27800ab) lost
 * `feeds/replicas` to "port 43751 is already in use" that way. Below the range no client socket lands, and two
 * tests picking the same one of ~12,000 ports in the same instant is what is left.
 */
function unhandedRange(): [number, number] | null {
  let low = 32_768;
  try {
    low =
      Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: the IANA dynamic range starts at 49152; 32768 is Linux's default and below both.
  }
  // From 20000: clear of the well-known services and of the ports fetch refuses (the highest is 10080).
  return low - 1 > 20_000 ? [20_000, low - 1] : null;
}

function bindable(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(null));
    // The wildcard, as `serve` binds: it is refused where any address holds the port, loopback or not.
    srv.listen(port, '0.0.0.0', () => {
      const bound = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  const range = unhandedRange();
  if (range)
    for (let tries = 0; tries < 50; tries++) {
      const port = await bindable(range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1)));
      if (port) return port;
    }
  const port = await bindable(0);
  if (!port) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}

/**
 * An upstream that is down, at an address no other process takes meanwhile: connection refused on a low port
 * outside the range the kernel hands out for port 0 (where every test's server listens), checked at the call.
 * A free port noted and left (`freePort()` in a beforeAll) was, minutes later, another process's listener: a
 * second suite's sandbox answered, the "down" upstream's pull succeeded and /readyz said ready
 * (failures/corrupt-store, beside a second whole run). A server that holds a port and drops each connection is
 * another failure (a reset, retried with backoff), not the refusal these tests are about.
 */
export async function downUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  // Not 1, 7, 9, 11…: fetch refuses those itself ("bad port"), another failure than a refusal.
  for (const port of [2, 3, 4, 5]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return { url: `http://127.0.0.1:${port}`, close: async () => {} };
  }
  throw new Error(
    'no low port refuses connections on 127.0.0.1 (tried 2, 3, 4, 5): a test needs one for a down upstream',
  );
}
