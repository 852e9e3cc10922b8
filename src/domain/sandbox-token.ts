// The bearer token `rostercal sandbox` accepts by default. Here, below both readers, because the sandbox hands it
// out (src/sandbox/) and configuration recognises it (config/sandbox-clock.ts), and configuration must not import
// the sandbox: `serve` for a real school loads none of it (test/cli/production-loads.test.ts).

export const SANDBOX_TOKEN = 'sandbox-token';
