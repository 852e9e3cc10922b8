// Name pools from many cultures, so every output (feeds, PDFs, calendars) meets real names:
// diacritics, Vietnamese tone marks, CJK, Arabic and Hebrew (right-to-left), Cyrillic, Greek, Devanagari, Thai.
// Given names are [legal, preferred] pairs; preferred is what the school calls the student day to day.
import { MORE_NAMES, nameHash } from './name-variety.ts';
import type { Rng } from './prng.ts';

export interface Culture {
  key: string;
  weight: number;
  given: readonly (readonly [legal: string, preferred: string])[];
  family: readonly string[];
}

export const CULTURES: readonly Culture[] = [
  {
    key: 'english',
    weight: 30,
    given: [
      ['William', 'Will'],
      ['Olivia', 'Olivia'],
      ['Charlotte', 'Charlie'],
      ['James', 'Jamie'],
      ['Amelia', 'Millie'],
      ['Thomas', 'Tom'],
      ['Isla', 'Isla'],
      ['Henry', 'Harry'],
      ['Matilda', 'Tilly'],
      ['Jack', 'Jack'],
      ['Grace', 'Grace'],
      ['Oliver', 'Ollie'],
      ['Elizabeth', 'Libby'],
      ['Samuel', 'Sam'],
      ['Ruby', 'Ruby'],
      ['Alexander', 'Xander'],
    ],
    family: [
      'Smith',
      'Jones',
      'Williams',
      "O'Brien",
      'Taylor',
      'Brown',
      'Wilson',
      'Thompson',
      'MacDonald',
      'Anderson',
      'Clarke',
      'Hughes',
      'Fitzgerald-Hall',
      'Walker',
    ],
  },
  {
    key: 'latin-diacritics',
    weight: 16,
    given: [
      ['Zoë', 'Zoë'],
      ['José', 'Pepe'],
      ['François', 'François'],
      ['Søren', 'Søren'],
      ['Łukasz', 'Łukasz'],
      ['Tomáš', 'Tomáš'],
      ['Çağrı', 'Çağrı'],
      ['Renée', 'Renée'],
      ['Björn', 'Björn'],
      ['Inês', 'Inês'],
      ['Maëlys', 'Maëlys'],
      ['Jürgen', 'Jürgen'],
      ['Siobhán', 'Siobhán'],
      ['Þórunn', 'Tóta'],
      ['Ñusta', 'Ñusta'],
      ['Dóra', 'Dóra'],
    ],
    family: [
      'Müller',
      'Núñez',
      'Lefèvre',
      'Kierkegård',
      'Wąsowski',
      'Dvořák',
      'Öztürk',
      'Ó Súilleabháin',
      'Ångström',
      'García Márquez',
      'Schäfer',
      'Ní Bhriain',
      'Þórsdóttir',
      'Gonçalves',
      'Kovačević',
    ],
  },
  {
    key: 'vietnamese',
    weight: 8,
    given: [
      ['Thị Ánh', 'Ánh'],
      ['Văn Đức', 'Đức'],
      ['Minh Khôi', 'Khôi'],
      ['Thu Hương', 'Hương'],
      ['Quốc Bảo', 'Bảo'],
      ['Ngọc Trâm', 'Trâm'],
      ['Hoàng Long', 'Long'],
      ['Phương Linh', 'Linh'],
      ['Gia Huy', 'Huy'],
    ],
    family: ['Nguyễn', 'Trần', 'Lê', 'Phạm', 'Hoàng', 'Vũ', 'Đặng', 'Bùi', 'Đỗ', 'Huỳnh'],
  },
  {
    key: 'chinese',
    weight: 10,
    given: [
      ['小明', '小明'],
      ['欣怡', 'Cindy'],
      ['子轩', '子轩'],
      ['雨桐', 'Tina'],
      ['浩然', 'Howard'],
      ['思琪', '思琪'],
      ['俊杰', 'Jay'],
      ['梓涵', '梓涵'],
      ['嘉怡', 'Grace'],
    ],
    family: ['王', '李', '张', '刘', '陈', '杨', '黄', '赵', '周', '吴'],
  },
  {
    key: 'arabic',
    weight: 8,
    given: [
      ['محمد', 'محمد'],
      ['فاطمة', 'فاطمة'],
      ['عمر', 'عمر'],
      ['ليلى', 'ليلى'],
      ['يوسف', 'يوسف'],
      ['نور', 'نور'],
      ['خالد', 'خالد'],
      ['مريم', 'مريم'],
    ],
    family: ['العلي', 'الحسن', 'المصري', 'الخطيب', 'حداد', 'النجار', 'الشامي', 'يوسف'],
  },
  {
    key: 'cyrillic',
    weight: 5,
    given: [
      ['Дмитрий', 'Дима'],
      ['Анастасия', 'Настя'],
      ['Александр', 'Саша'],
      ['Екатерина', 'Катя'],
      ['Михаил', 'Миша'],
      ['Ольга', 'Оля'],
      ['Иван', 'Ваня'],
    ],
    family: ['Иванов', 'Смирнова', 'Кузнецов', 'Попова', 'Соколов', 'Лебедева', 'Шевченко'],
  },
  {
    key: 'greek',
    weight: 4,
    given: [
      ['Γεώργιος', 'Γιώργος'],
      ['Αικατερίνη', 'Κατερίνα'],
      ['Δημήτριος', 'Δημήτρης'],
      ['Ελένη', 'Ελένη'],
      ['Κωνσταντίνος', 'Κώστας'],
      ['Σοφία', 'Σοφία'],
    ],
    family: ['Παπαδόπουλος', 'Παπαδοπούλου', 'Γεωργίου', 'Οικονόμου', 'Αλεξίου', 'Νικολάου'],
  },
  {
    key: 'hindi',
    weight: 5,
    given: [
      ['आरव', 'आरव'],
      ['अनन्या', 'अनु'],
      ['Priyanka', 'Priya'],
      ['Arjun', 'Arjun'],
      ['विवान', 'विवान'],
      ['Saanvi', 'Saanvi'],
    ],
    family: ['शर्मा', 'Patel', 'गुप्ता', 'Iyer', 'Reddy', 'सिंह'],
  },
  {
    key: 'japanese',
    weight: 3,
    given: [
      ['陽翔', '陽翔'],
      ['結衣', 'Yui'],
      ['蓮', '蓮'],
      ['さくら', 'さくら'],
      ['大和', 'Yamato'],
    ],
    family: ['佐藤', '鈴木', '高橋', '田中', '渡辺'],
  },
  {
    key: 'korean',
    weight: 3,
    given: [
      ['민준', '민준'],
      ['서연', 'Sophie'],
      ['지호', '지호'],
      ['하은', '하은'],
      ['도윤', 'Daniel'],
    ],
    family: ['김', '이', '박', '최', '정'],
  },
  {
    key: 'hebrew',
    weight: 2,
    given: [
      ['נועה', 'נועה'],
      ['איתי', 'איתי'],
      ['תמר', 'תמר'],
      ['אורי', 'אורי'],
    ],
    family: ['כהן', 'לוי', 'מזרחי', 'פרץ'],
  },
  {
    key: 'maori-pacific',
    weight: 3,
    given: [
      ['Tāne', 'Tāne'],
      ['Mereana', 'Mere'],
      ['Wiremu', 'Wiremu'],
      ['Aroha', 'Aroha'],
      ['Sione', 'Sione'],
      ["Mele'ana", 'Mele'],
    ],
    family: ['Ngāta', 'Te Whāiti', 'Tūhoe', 'Fifita', 'Taufa', 'Pōmare'],
  },
  {
    key: 'thai',
    weight: 2,
    given: [
      ['สมชาย', 'สมชาย'],
      ['กัญญา', 'Kanya'],
      ['ณัฐวุฒิ', 'Nat'],
    ],
    family: ['ศรีสุข', 'วงศ์สวัสดิ์', 'บุญมา'],
  },
];

export interface PersonName {
  culture: string;
  firstName: string;
  legalFirstName: string;
  lastName: string;
}

const cultureEntries = CULTURES.map((c) => [c, c.weight] as const);

export function personName(rng: Rng, cultureKey?: string): PersonName {
  const culture = cultureKey
    ? (CULTURES.find((c) => c.key === cultureKey) ?? rng.weighted(cultureEntries))
    : rng.weighted(cultureEntries);
  const [legal, preferred] = rng.pick(culture.given);
  return {
    culture: culture.key,
    firstName: preferred,
    legalFirstName: legal,
    lastName: rng.pick(culture.family),
  };
}

// Which given names are girls' and which are used for either: the rest are boys'. A student whose recorded gender
// is male or female gets a name that suits it, so a girls' team never lists a boy's name (see generate.ts).
const FEMININE = new Set([
  'Olivia',
  'Charlotte',
  'Amelia',
  'Isla',
  'Matilda',
  'Grace',
  'Elizabeth',
  'Ruby',
  'Zoë',
  'Renée',
  'Inês',
  'Maëlys',
  'Siobhán',
  'Þórunn',
  'Ñusta',
  'Dóra',
  'Thị Ánh',
  'Thu Hương',
  'Ngọc Trâm',
  'Phương Linh',
  '欣怡',
  '雨桐',
  '思琪',
  '嘉怡',
  'فاطمة',
  'ليلى',
  'مريم',
  'Анастасия',
  'Екатерина',
  'Ольга',
  'Αικατερίνη',
  'Ελένη',
  'Σοφία',
  'अनन्या',
  'Priyanka',
  'Saanvi',
  '結衣',
  'さくら',
  '서연',
  '하은',
  'נועה',
  'תמר',
  'Mereana',
  'Aroha',
  "Mele'ana",
  'กัญญา',
]);
const EITHER = new Set(['Çağrı', '梓涵', 'نور', '蓮', '지호', 'אורי']);

export type NameGender = 'male' | 'female' | 'either';

for (const more of Object.values(MORE_NAMES)) for (const legal of more.feminine) FEMININE.add(legal);

const genderOfLegal = (legal: string): NameGender =>
  FEMININE.has(legal) ? 'female' : EITHER.has(legal) ? 'either' : 'male';

/** Every given name of a culture: the first draws' and those kept for renaming namesakes. */
const allGiven = (c: Culture) => [...c.given, ...(MORE_NAMES[c.key]?.given ?? [])];

const byName = new Map<string, NameGender>();
for (const c of CULTURES)
  for (const [legal, preferred] of allGiven(c)) {
    byName.set(legal, genderOfLegal(legal));
    byName.set(preferred, genderOfLegal(legal));
  }

/** Whose name a given name (legal or preferred) from the pools is; undefined for a name not in them. */
export function givenNameGender(name: string): NameGender | undefined {
  return byName.get(name);
}

/**
 * A given name of the culture that suits a recorded gender: `current` when it does, else one chosen by `index`
 * among those that do (no random draw, so every other draw of the generator stays where it was).
 */
export function givenNameFor(
  cultureKey: string,
  gender: string | null,
  current: readonly [legal: string, preferred: string],
  index: number,
): readonly [legal: string, preferred: string] {
  const want = gender === 'Male' ? 'male' : gender === 'Female' ? 'female' : null;
  if (want === null || genderOfLegal(current[0]) !== (want === 'male' ? 'female' : 'male')) return current;
  const culture = CULTURES.find((c) => c.key === cultureKey);
  const fits = (culture?.given ?? []).filter(
    ([legal]) => genderOfLegal(legal) !== (want === 'male' ? 'female' : 'male'),
  );
  return fits.length ? (fits[index % fits.length] as readonly [string, string]) : current;
}

/** A student's names as the school records them. */
export interface FullName {
  legal: string;
  preferred: string;
  last: string;
}

/** How many students per thousand keep a full name another student already has (a real school has a few). */
const NAMESAKES_PER_THOUSAND = 4;

/**
 * The student's name, or, when `taken` says another student already has it, a name of the same culture that
 * suits the same gender and nobody has: the same given name with another surname first, then another given name,
 * then a surname from another culture (families mix). A few students per thousand keep their namesake's name.
 * No random draw: the choice follows the student's id.
 */
export function distinctName(
  cultureKey: string,
  gender: string | null,
  name: FullName,
  id: number,
  taken: (n: FullName) => boolean,
): FullName {
  if (!taken(name) || nameHash(`namesake ${id}`) % 1000 < NAMESAKES_PER_THOUSAND) return name;
  const culture = CULTURES.find((c) => c.key === cultureKey);
  if (!culture) return name;
  const opposite = gender === 'Male' ? 'female' : gender === 'Female' ? 'male' : null;
  const h = nameHash(`rename ${id}`);
  const turn = <T>(items: readonly T[]): T[] => {
    const k = items.length ? h % items.length : 0;
    return [...items.slice(k), ...items.slice(0, k)];
  };
  const given = turn(
    allGiven(culture).filter(([legal]) => opposite === null || genderOfLegal(legal) !== opposite),
  );
  const own = turn([...culture.family, ...(MORE_NAMES[culture.key]?.family ?? [])]);
  const others = turn(CULTURES.filter((c) => c !== culture).flatMap((c) => c.family));
  const tries = function* (): Generator<FullName> {
    for (const last of own) yield { ...name, last };
    for (const [legal, preferred] of given) for (const last of own) yield { legal, preferred, last };
    for (const [legal, preferred] of [[name.legal, name.preferred] as const, ...given])
      for (const last of others) yield { legal, preferred, last };
  };
  for (const n of tries()) if (!taken(n)) return n;
  return name;
}

/** ASCII slug for e-mail local parts; empty when the name has no Latin letters at all. */
export function asciiSlug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[ßẞ]/g, 'ss')
    .replace(/[øØ]/g, 'o')
    .replace(/[łŁ]/g, 'l')
    .replace(/[þÞ]/g, 'th')
    .replace(/[æÆ]/g, 'ae')
    .replace(/[đĐ]/g, 'd')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '');
}

// Relationship words without a gender: the name pools do not record one.
export const GUARDIAN_RELATIONSHIPS = [
  'Parent',
  'Parent',
  'Parent',
  'Guardian',
  'Grandparent',
  'Carer',
] as const;

export const MEDICAL_CONDITIONS = [
  { name: 'Asthma', notes: 'Reliever inhaler kept in bag' },
  { name: 'Anaphylaxis (peanuts)', notes: 'EpiPen carried; second pen in sick bay' },
  { name: 'Type 1 diabetes', notes: 'Check glucose before training' },
  { name: 'Epilepsy', notes: 'Action plan on file' },
  { name: 'Coeliac disease', notes: 'Gluten-free food on trips' },
  { name: 'Hay fever', notes: null },
  { name: 'Previous concussion', notes: 'Cleared to play; monitor' },
] as const;
