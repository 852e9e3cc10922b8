// Placeholder until the issue that builds `rostercal roster` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal roster: not available yet');
  return 1;
}
