// Placeholder until the issue that builds `rostercal sync` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal sync: not available yet');
  return 1;
}
