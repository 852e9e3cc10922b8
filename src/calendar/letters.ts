// Letters, for comparing names: the letters NFKD and case folding leave alone (ø, ł, ß…), Cyrillic and Greek
// letters that look like Latin ones (confusable skeletons in the manner of UTS #39), and romanisations of Cyrillic
// and Greek names. other-children-filter.ts applies them to students' names and to text alike, so both sides meet.

/** Letters that neither NFKD nor case folding turn into their plain form. */
const FOLD: Record<string, string> = {
  ø: 'o',
  đ: 'd',
  ł: 'l',
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  þ: 'th',
  ð: 'd',
  ı: 'i',
  ħ: 'h',
  ŧ: 't',
  ς: 'σ',
  ʼ: "'",
  '’': "'",
  '\u2010': '-',
  '\u2011': '-',
};
/**
 * Confusables (UTS #39): Cyrillic and Greek letters that look like Latin ones, lower case, to one skeleton letter.
 * Applied to names and to text alike, so "Xаnder" with a Cyrillic а meets "Xander", and "Саша" still meets itself.
 */
const SKELETON: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  һ: 'h',
  н: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  с: 'c',
  ѕ: 's',
  т: 't',
  у: 'y',
  ԝ: 'w',
  х: 'x',
  ԁ: 'd',
  ɡ: 'g',
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};
const FOLD_RE = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'g');
const SKELETON_RE = new RegExp(`[${Object.keys(SKELETON).join('')}]`, 'g');

/** The word (lower case, marks removed) with FOLD's letters plain and look-alike letters as their skeleton. */
export function plainLetters(word: string): string {
  return word.replace(FOLD_RE, (c) => FOLD[c] ?? c).replace(SKELETON_RE, (c) => SKELETON[c] ?? c);
}

/**
 * Romanisations of a Cyrillic or Greek word, lower case: a common English-language one (BGN/PCGN-like: Саша →
 * sasha, Шевченко → shevchenko, Γιώργος → giorgos) and a variant where spellings often differ (х as h, й as i, я
 * as ia; χ as h). Empty for other scripts.
 */
export function romanisations(word: string): string[] {
  // Marks go (Greek accents, stress marks), but not the ones that make a Cyrillic letter its own: й, ё and ї are
  // not и, е and і with an accent, and their romanisations differ (Сергей → sergey, Алёна → alyona).
  const w = word
    .toLowerCase()
    .normalize('NFC')
    .replace(/[^йёї]/gu, (c) => c.normalize('NFD').replace(/\p{M}/gu, ''));
  if (/\p{Script=Cyrillic}/u.test(w)) {
    const a = romanise(w, CYRILLIC);
    const b = romanise(w, { ...CYRILLIC, ...CYRILLIC_VARIANT });
    return a === b ? [a] : [a, b];
  }
  if (/\p{Script=Greek}/u.test(w)) {
    const g = w.replace(/ς/g, 'σ');
    const a = romanise(g, GREEK);
    const b = romanise(g, { ...GREEK, ...GREEK_VARIANT });
    return a === b ? [a] : [a, b];
  }
  return [];
}

function romanise(word: string, table: Record<string, string>): string {
  let out = '';
  for (let i = 0; i < word.length; i++) {
    const pair = table[word.slice(i, i + 2)];
    if (pair !== undefined) {
      out += pair;
      i++;
    } else out += table[word[i]!] ?? word[i];
  }
  return out;
}

const CYRILLIC: Record<string, string> = {
  а: 'a',
  б: 'b',
  в: 'v',
  г: 'g',
  ґ: 'g',
  д: 'd',
  е: 'e',
  ё: 'yo',
  є: 'ye',
  ж: 'zh',
  з: 'z',
  и: 'i',
  і: 'i',
  ї: 'yi',
  й: 'y',
  к: 'k',
  л: 'l',
  м: 'm',
  н: 'n',
  о: 'o',
  п: 'p',
  р: 'r',
  с: 's',
  т: 't',
  у: 'u',
  ф: 'f',
  х: 'kh',
  ц: 'ts',
  ч: 'ch',
  ш: 'sh',
  щ: 'shch',
  ъ: '',
  ы: 'y',
  ь: '',
  э: 'e',
  ю: 'yu',
  я: 'ya',
  ий: 'iy',
  ый: 'y',
};
const CYRILLIC_VARIANT: Record<string, string> = {
  х: 'h',
  й: 'i',
  я: 'ia',
  ю: 'iu',
  ё: 'e',
  ий: 'ii',
  щ: 'sch',
};
const GREEK: Record<string, string> = {
  α: 'a',
  β: 'v',
  γ: 'g',
  δ: 'd',
  ε: 'e',
  ζ: 'z',
  η: 'i',
  θ: 'th',
  ι: 'i',
  κ: 'k',
  λ: 'l',
  μ: 'm',
  ν: 'n',
  ξ: 'x',
  ο: 'o',
  π: 'p',
  ρ: 'r',
  σ: 's',
  τ: 't',
  υ: 'y',
  φ: 'f',
  χ: 'ch',
  ψ: 'ps',
  ω: 'o',
  ου: 'ou',
  αι: 'ai',
  ει: 'ei',
  οι: 'oi',
  αυ: 'av',
  ευ: 'ev',
  γγ: 'ng',
  γκ: 'gk',
  μπ: 'mp',
  ντ: 'nt',
};
const GREEK_VARIANT: Record<string, string> = {
  χ: 'h',
  ου: 'u',
  αυ: 'af',
  ευ: 'ef',
  μπ: 'b',
  ντ: 'd',
  β: 'b',
};
