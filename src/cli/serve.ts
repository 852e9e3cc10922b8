// Placeholder until the issue that builds `rostercal serve` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal serve: not available yet');
  return 1;
}
