// Placeholder until the issue that builds `rostercal sandbox` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal sandbox: not available yet');
  return 1;
}
