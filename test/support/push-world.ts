// The world of a push test whose product runs as a child process (`rostercal sync`, `serve`): a sandbox school built
// around this week, and the Google and Graph fakes it pushes to, with the environment a child needs to reach them
// (tokens by `env:` reference, the Graph fake's certificate).
import { generateKeyPairSync } from 'node:crypto';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type FakeGraph, startFakeGraph } from '../fakes/graph.ts';
import { startWeekSandbox } from './clock.ts';

export interface PushWorld {
  sandbox: Sandbox;
  graph: FakeGraph;
  google: FakeGoogle;
  /** The child's environment for `configFile`: HILL_TOKEN, GRAPH_TOKEN, GOOGLE_TOKEN, SA_KEY and the fake's CA. */
  env(configFile: string): Record<string, string>;
  close(): Promise<void>;
}

export async function startPushWorld(seed: number): Promise<PushWorld> {
  const [sandbox, graph, google] = await Promise.all([
    startWeekSandbox({ seed, scale: 'small' }),
    startFakeGraph({ knobs: { retryAfterSeconds: 0.05 } }),
    startFakeGoogle(),
  ]);
  // A service account the fake does not know (a well-formed key it refuses).
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const serviceAccountKey = JSON.stringify({
    type: 'service_account',
    client_email: 'rostercal@unknown-project.iam.gserviceaccount.com',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    token_uri: google.tokenUrl,
  });
  return {
    sandbox,
    graph,
    google,
    env: (configFile) => ({
      ROSTERCAL_CONFIG: configFile,
      HILL_TOKEN: sandbox.token,
      GRAPH_TOKEN: graph.token,
      GOOGLE_TOKEN: google.token,
      NODE_EXTRA_CA_CERTS: graph.caFile,
      SA_KEY: serviceAccountKey,
    }),
    close: async () => {
      await Promise.all([graph.close(), google.close(), sandbox.close()]);
    },
  };
}
