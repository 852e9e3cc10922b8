// Placeholder until the issue that builds `rostercal status` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal status: not available yet');
  return 1;
}
