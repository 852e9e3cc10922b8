// Placeholder until the issue that builds `rostercal feeds` lands.
export async function run(_argv: string[]): Promise<number> {
  console.error('rostercal feeds: not available yet');
  return 1;
}
