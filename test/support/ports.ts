// A free TCP port on loopback, for servers that must know their own address before they listen (a public URL,
// an identity provider's redirect URI). The one copy the suite uses.
import { type AddressInfo, connect, createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
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
