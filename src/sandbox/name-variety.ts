// More names per culture, drawn on only to rename a student whose full name another student already has: a real
// school shares first names and surnames freely but has only a few exact namesakes per thousand. The first draws
// (name-pools.ts) stay as they were, so every other draw of the generator, and most names, stay where they were.

type Given = readonly (readonly [legal: string, preferred: string])[];

export interface MoreNames {
  given: Given;
  /** Legal given names above that are girls' (the rest are boys'). */
  feminine: readonly string[];
  family: readonly string[];
}

/**
 * One row per culture: name | girls' given names | boys' given names | family names, each list comma-separated;
 * a given name is `legal=preferred`, or just `legal` when the child goes by it.
 */
const TABLE = `
english | Emily, Sophie, Hannah, Lucy, Chloe, Ella, Poppy, Freya | Daniel=Dan, Benjamin=Ben, Joshua=Josh, Lucas, Noah, Edward=Ned, George, Archie | Evans, Roberts, Johnson, Lewis, Robinson, Wright, Wood, Green, Harris, Martin, Jackson, Clark, Turner, White, Cooper, Hill, Ward, Morris, King, Baker, Harrison, Morgan, Allen, Young, Mitchell
latin-diacritics | Chloé, Lucía, Agnieszka=Aga, Eliška | Håkon, Andrés, Mikuláš, João | García, Peña, Gonçalves, Thérien, Jørgensen, Łęcki, Novák, Şahin, Ó Briain, Björnsdóttir, Häkkinen, Sørensen, Márquez, Köhler, Żak
vietnamese | Thanh Hà=Hà, Khánh Vy=Vy, Bảo Ngọc=Ngọc, Minh Anh | Đức Anh, Tuấn Kiệt=Kiệt, Quang Huy=Quang, Nhật Minh=Minh | Phan, Võ, Ngô, Dương, Lý, Trương, Đinh, Hồ
chinese | 诗涵, 佳琪=Kiki, 梦瑶, 晓雯=Wendy | 宇航, 博文=Bowen, 志强, 天佑=Tony | 徐, 孙, 胡, 朱, 高, 林, 何, 郭, 马, 罗
arabic | زينب, سارة, هدى | أحمد, علي, حسن | الأحمد, الزين, القاسم, السيد, منصور, عباس, الحلبي, الراشد
cyrillic | Мария=Маша, Татьяна=Таня | Сергей=Серёжа, Николай=Коля | Морозов, Волкова, Новиков, Фёдорова, Павленко, Козлов, Белова, Орлов
greek | Μαρία, Δέσποινα | Νικόλαος=Νίκος, Ιωάννης=Γιάννης | Ιωάννου, Βασιλείου, Πετρόπουλος, Κωνσταντίνου, Μακρής, Δημητρίου
hindi | दिया, Meera | Rohan, ईशान | वर्मा, Nair, जोशी, Menon, Kapoor, मेहता
japanese | 陽菜=Hina, 美咲 | 悠真, 湊=Minato | 伊藤, 山本, 中村, 小林, 加藤
korean | 지우=Jiwoo, 수아 | 시우, 예준=Jun | 강, 조, 윤, 장, 임
hebrew | מאיה, שירה | יונתן, דניאל | אברהם, פרידמן, שפירא, ביטון
maori-pacific | Anahera=Ana, Losana | Rāwiri, Tevita | Tūpara, Havili, Ngata-Aerengamate, Tuilagi, Parata
thai | สุดารัตน์=Dao, พิมพ์ชนก=Pim | ธนากร=Ton, อนุชา | แสงทอง, ทองดี, สุวรรณ, จันทร์เพ็ญ
`;

function givenOf(list: string): Given {
  return list.split(', ').map((g) => {
    const [legal, preferred] = g.split('=') as [string, string | undefined];
    return [legal, preferred ?? legal] as const;
  });
}

export const MORE_NAMES: Readonly<Record<string, MoreNames>> = Object.fromEntries(
  TABLE.trim()
    .split('\n')
    .map((row) => {
      const [culture, girls, boys, family] = row.split(' | ') as [string, string, string, string];
      const feminine = givenOf(girls);
      return [
        culture,
        {
          given: [...feminine, ...givenOf(boys)],
          feminine: feminine.map(([legal]) => legal),
          family: family.split(', '),
        },
      ];
    }),
);

/** A small deterministic hash (FNV-1a) so a rename depends on the student's id, never on a random draw. */
export function nameHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
