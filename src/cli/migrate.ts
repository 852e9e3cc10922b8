// Placeholder until the issue that builds `rostercal migrate` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal migrate: not available yet');
  return 1;
}
