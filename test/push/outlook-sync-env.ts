// What the CLI push tests hand `rostercal sync`: school `hill` on the sandbox with one Outlook target (the staff's
// calendars) on the fake Graph, its config written into the test's directory, and the environment that names them.
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { FakeGraph } from '../fakes/graph.ts';
import { writeSchoolConfig } from '../support/cli.ts';

/** The environment of a sync with that target; `extra` adds to it (SANDBOX_NOW, say). */
export function outlookSyncEnv(
  dir: string,
  sandbox: Pick<Sandbox, 'url' | 'token'>,
  fake: Pick<FakeGraph, 'url' | 'token' | 'caFile'>,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  const config = writeSchoolConfig(dir, sandbox.url, [
    {
      id: 'staff',
      provider: 'outlook',
      scope: 'staff',
      outlook: { baseUrl: fake.url, accessToken: 'env:GRAPH_TOKEN' },
    },
  ]);
  return {
    ...process.env,
    ROSTERCAL_CONFIG: config,
    HILL_TOKEN: sandbox.token,
    GRAPH_TOKEN: fake.token,
    NODE_EXTRA_CA_CERTS: fake.caFile,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}
