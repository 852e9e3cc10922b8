// A TCP relay in front of a real PostgreSQL server that records every SQL statement clients send (simple
// queries and extended-protocol parses, read off the wire protocol), so a test can assert what the product asks
// the database (how many statements, which tables, inside a transaction or not) without knowing the names of
// the store's methods, which a refactor is free to change. `cut()` is a network cut between the relay's clients
// and the server (every connection reset, new ones reset on arrival) until `restore()`; `hold()` is one that drops
// packets instead: connections stay open, nothing crosses until `restore()` delivers it (TCP's retransmission).
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface PgWire {
  /** A database URL that goes through the relay. */
  url: string;
  /** The SQL of every statement sent since the last reset, in order. */
  statements(): string[];
  reset(): void;
  /** Resets every relayed connection and each new one until restore(): the database is out of reach. */
  cut(): void;
  /** Lets nothing through, in either direction, until restore(); connections stay open. */
  hold(): void;
  /**
   * Cuts (as cut()) when a client next sends a statement matching `pattern`, before that statement reaches the
   * server: the database goes out of reach at one chosen step of what the product does.
   */
  cutOn(pattern: RegExp): void;
  restore(): void;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

/** Frontend messages of one connection, parsed as they arrive; calls `onSql` with each statement's text. */
function frontendParser(onSql: (sql: string) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  let started = false;
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      if (!started) {
        // Untyped: SSLRequest / GSSENCRequest / StartupMessage (length, then a code).
        if (buf.length < 8) return;
        const len = buf.readInt32BE(0);
        if (buf.length < len) return;
        const code = buf.readInt32BE(4);
        if (code !== SSL_REQUEST && code !== GSS_REQUEST) started = true;
        buf = buf.subarray(len);
        continue;
      }
      if (buf.length < 5) return;
      const type = String.fromCharCode(buf[0]!);
      const len = buf.readInt32BE(1);
      if (buf.length < 1 + len) return;
      const body = buf.subarray(5, 1 + len);
      if (type === 'Q') onSql(body.subarray(0, body.indexOf(0)).toString('utf8'));
      if (type === 'P') {
        // Parse: statement name (cstring), then the query (cstring).
        const nameEnd = body.indexOf(0);
        const rest = body.subarray(nameEnd + 1);
        onSql(rest.subarray(0, rest.indexOf(0)).toString('utf8'));
      }
      buf = buf.subarray(1 + len);
    }
  };
}

export async function startPgWire(databaseUrl: string): Promise<PgWire> {
  const target = new URL(databaseUrl);
  const host = target.hostname;
  const port = Number(target.port || 5432);
  let seen: string[] = [];
  const sockets = new Set<Socket>();
  let cut = false;
  let held: (() => void)[] | null = null;
  let cutWhen: RegExp | null = null;
  const cutAll = () => {
    cut = true;
    for (const s of sockets) s.resetAndDestroy();
  };
  /** Writes now, or when the hold ends. */
  const send = (to: Socket, d: Buffer) => (held ? held.push(() => to.write(d)) : to.write(d));
  const server: Server = createServer((client) => {
    if (cut) return void client.resetAndDestroy();
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    let tripped = false;
    const parse = frontendParser((sql) => {
      seen.push(sql);
      if (cutWhen?.test(sql)) {
        cutWhen = null;
        tripped = true;
      }
    });
    client.on('data', (d: Buffer) => {
      parse(d);
      if (tripped) return cutAll();
      send(upstream, d);
    });
    upstream.on('data', (d: Buffer) => send(client, d));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const relayed = new URL(databaseUrl);
  relayed.hostname = '127.0.0.1';
  relayed.port = String((server.address() as { port: number }).port);
  return {
    url: relayed.toString(),
    statements: () => [...seen],
    reset() {
      seen = [];
    },
    cut: cutAll,
    cutOn(pattern) {
      cutWhen = pattern;
    },
    hold() {
      held ??= [];
    },
    restore() {
      cut = false;
      cutWhen = null;
      const pending = held ?? [];
      held = null;
      for (const write of pending) write();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
