// How many letters differ between two names, for "did you mean …?" messages (time zones, setting names).

/** Edit distance counting a swap of two neighbours as one edit ("Lodnon" → "London"). */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i]!;
    const up = rows[i - 1]!;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row[j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
