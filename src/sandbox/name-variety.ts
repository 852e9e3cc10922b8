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

export const MORE_NAMES: Readonly<Record<string, MoreNames>> = {
  english: {
    given: [
      ['Emily', 'Emily'],
      ['Sophie', 'Sophie'],
      ['Hannah', 'Hannah'],
      ['Lucy', 'Lucy'],
      ['Chloe', 'Chloe'],
      ['Ella', 'Ella'],
      ['Poppy', 'Poppy'],
      ['Freya', 'Freya'],
      ['Daniel', 'Dan'],
      ['Benjamin', 'Ben'],
      ['Joshua', 'Josh'],
      ['Lucas', 'Lucas'],
      ['Noah', 'Noah'],
      ['Edward', 'Ned'],
      ['George', 'George'],
      ['Archie', 'Archie'],
    ],
    feminine: ['Emily', 'Sophie', 'Hannah', 'Lucy', 'Chloe', 'Ella', 'Poppy', 'Freya'],
    family: [
      'Evans',
      'Roberts',
      'Johnson',
      'Lewis',
      'Robinson',
      'Wright',
      'Wood',
      'Green',
      'Harris',
      'Martin',
      'Jackson',
      'Clark',
      'Turner',
      'White',
      'Cooper',
      'Hill',
      'Ward',
      'Morris',
      'King',
      'Baker',
      'Harrison',
      'Morgan',
      'Allen',
      'Young',
      'Mitchell',
    ],
  },
  'latin-diacritics': {
    given: [
      ['Chloé', 'Chloé'],
      ['Lucía', 'Lucía'],
      ['Agnieszka', 'Aga'],
      ['Eliška', 'Eliška'],
      ['Håkon', 'Håkon'],
      ['Andrés', 'Andrés'],
      ['Mikuláš', 'Mikuláš'],
      ['João', 'João'],
    ],
    feminine: ['Chloé', 'Lucía', 'Agnieszka', 'Eliška'],
    family: [
      'García',
      'Peña',
      'Gonçalves',
      'Thérien',
      'Jørgensen',
      'Łęcki',
      'Novák',
      'Şahin',
      'Ó Briain',
      'Björnsdóttir',
      'Häkkinen',
      'Sørensen',
      'Márquez',
      'Köhler',
      'Żak',
    ],
  },
  vietnamese: {
    given: [
      ['Thanh Hà', 'Hà'],
      ['Khánh Vy', 'Vy'],
      ['Bảo Ngọc', 'Ngọc'],
      ['Minh Anh', 'Minh Anh'],
      ['Đức Anh', 'Đức Anh'],
      ['Tuấn Kiệt', 'Kiệt'],
      ['Quang Huy', 'Quang'],
      ['Nhật Minh', 'Minh'],
    ],
    feminine: ['Thanh Hà', 'Khánh Vy', 'Bảo Ngọc', 'Minh Anh'],
    family: ['Phan', 'Võ', 'Ngô', 'Dương', 'Lý', 'Trương', 'Đinh', 'Hồ'],
  },
  chinese: {
    given: [
      ['诗涵', '诗涵'],
      ['佳琪', 'Kiki'],
      ['梦瑶', '梦瑶'],
      ['晓雯', 'Wendy'],
      ['宇航', '宇航'],
      ['博文', 'Bowen'],
      ['志强', '志强'],
      ['天佑', 'Tony'],
    ],
    feminine: ['诗涵', '佳琪', '梦瑶', '晓雯'],
    family: ['徐', '孙', '胡', '朱', '高', '林', '何', '郭', '马', '罗'],
  },
  arabic: {
    given: [
      ['زينب', 'زينب'],
      ['سارة', 'سارة'],
      ['هدى', 'هدى'],
      ['أحمد', 'أحمد'],
      ['علي', 'علي'],
      ['حسن', 'حسن'],
    ],
    feminine: ['زينب', 'سارة', 'هدى'],
    family: ['الأحمد', 'الزين', 'القاسم', 'السيد', 'منصور', 'عباس', 'الحلبي', 'الراشد'],
  },
  cyrillic: {
    given: [
      ['Мария', 'Маша'],
      ['Татьяна', 'Таня'],
      ['Сергей', 'Серёжа'],
      ['Николай', 'Коля'],
    ],
    feminine: ['Мария', 'Татьяна'],
    family: ['Морозов', 'Волкова', 'Новиков', 'Фёдорова', 'Павленко', 'Козлов', 'Белова', 'Орлов'],
  },
  greek: {
    given: [
      ['Μαρία', 'Μαρία'],
      ['Δέσποινα', 'Δέσποινα'],
      ['Νικόλαος', 'Νίκος'],
      ['Ιωάννης', 'Γιάννης'],
    ],
    feminine: ['Μαρία', 'Δέσποινα'],
    family: ['Ιωάννου', 'Βασιλείου', 'Πετρόπουλος', 'Κωνσταντίνου', 'Μακρής', 'Δημητρίου'],
  },
  hindi: {
    given: [
      ['दिया', 'दिया'],
      ['Meera', 'Meera'],
      ['Rohan', 'Rohan'],
      ['ईशान', 'ईशान'],
    ],
    feminine: ['दिया', 'Meera'],
    family: ['वर्मा', 'Nair', 'जोशी', 'Menon', 'Kapoor', 'मेहता'],
  },
  japanese: {
    given: [
      ['陽菜', 'Hina'],
      ['美咲', '美咲'],
      ['悠真', '悠真'],
      ['湊', 'Minato'],
    ],
    feminine: ['陽菜', '美咲'],
    family: ['伊藤', '山本', '中村', '小林', '加藤'],
  },
  korean: {
    given: [
      ['지우', 'Jiwoo'],
      ['수아', '수아'],
      ['시우', '시우'],
      ['예준', 'Jun'],
    ],
    feminine: ['지우', '수아'],
    family: ['강', '조', '윤', '장', '임'],
  },
  hebrew: {
    given: [
      ['מאיה', 'מאיה'],
      ['שירה', 'שירה'],
      ['יונתן', 'יונתן'],
      ['דניאל', 'דניאל'],
    ],
    feminine: ['מאיה', 'שירה'],
    family: ['אברהם', 'פרידמן', 'שפירא', 'ביטון'],
  },
  'maori-pacific': {
    given: [
      ['Anahera', 'Ana'],
      ['Losana', 'Losana'],
      ['Rāwiri', 'Rāwiri'],
      ['Tevita', 'Tevita'],
    ],
    feminine: ['Anahera', 'Losana'],
    family: ['Tūpara', 'Havili', 'Ngata-Aerengamate', 'Tuilagi', 'Parata'],
  },
  thai: {
    given: [
      ['สุดารัตน์', 'Dao'],
      ['พิมพ์ชนก', 'Pim'],
      ['ธนากร', 'Ton'],
      ['อนุชา', 'อนุชา'],
    ],
    feminine: ['สุดารัตน์', 'พิมพ์ชนก'],
    family: ['แสงทอง', 'ทองดี', 'สุวรรณ', 'จันทร์เพ็ญ'],
  },
};

/** A small deterministic hash (FNV-1a) so a rename depends on the student's id, never on a random draw. */
export function nameHash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
