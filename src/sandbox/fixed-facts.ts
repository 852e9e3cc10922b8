// Fixed facts the generator draws from: departments, the activity catalogue, venues, opponents, texts.
import type { ActivityKind } from './model.ts';

export const DEPARTMENTS = [
  'Sport',
  'Music',
  'Performing Arts',
  'Outdoor Education',
  'Academic Extension',
  'Service & Community',
] as const;

export interface ActivitySpec {
  name: string;
  code: string;
  emoji: string;
  hexColor: string;
  kind: ActivityKind;
  department: (typeof DEPARTMENTS)[number];
  /** Word for a regular session: Training, Rehearsal, Meeting… */
  regular: string;
  positions?: readonly (readonly [string, number])[];
  /** Sports with fixtures: a plausible score range per side. */
  scoreMax?: number;
}

export const ACTIVITIES: readonly ActivitySpec[] = [
  {
    name: 'Football',
    code: 'FB',
    emoji: '⚽',
    hexColor: '#2E7D32',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    positions: [
      ['Goalkeeper', 1],
      ['Defender', 4],
      ['Midfielder', 4],
      ['Forward', 2],
    ],
    scoreMax: 5,
  },
  {
    name: 'Netball',
    code: 'NB',
    emoji: '🏐',
    hexColor: '#AD1457',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    positions: [
      ['Goal Shooter', 1],
      ['Goal Attack', 1],
      ['Wing Attack', 1],
      ['Centre', 1],
      ['Wing Defence', 1],
      ['Goal Defence', 1],
      ['Goal Keeper', 1],
    ],
    scoreMax: 45,
  },
  {
    name: 'Concert Band',
    code: 'CB',
    emoji: '🎺',
    hexColor: '#F9A825',
    kind: 'music',
    department: 'Music',
    regular: 'Rehearsal',
    positions: [
      ['Flute', 6],
      ['Clarinet', 8],
      ['Trumpet', 6],
      ['Trombone', 4],
      ['Percussion', 4],
    ],
  },
  {
    name: 'Debating',
    code: 'DEB',
    emoji: '🗣️',
    hexColor: '#5E35B1',
    kind: 'club',
    department: 'Academic Extension',
    regular: 'Meeting',
  },
  {
    name: 'Basketball',
    code: 'BB',
    emoji: '🏀',
    hexColor: '#EF6C00',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    positions: [
      ['Point Guard', 1],
      ['Shooting Guard', 1],
      ['Small Forward', 1],
      ['Power Forward', 1],
      ['Centre', 1],
    ],
    scoreMax: 70,
  },
  {
    name: 'Rugby Union',
    code: 'RU',
    emoji: '🏉',
    hexColor: '#4E342E',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    positions: [
      ['Prop', 2],
      ['Hooker', 1],
      ['Lock', 2],
      ['Flanker', 2],
      ['Number 8', 1],
      ['Halfback', 1],
      ['Five-eighth', 1],
      ['Centre', 2],
      ['Wing', 2],
      ['Fullback', 1],
    ],
    scoreMax: 40,
  },
  {
    name: 'Cricket',
    code: 'CR',
    emoji: '🏏',
    hexColor: '#F5F5DC',
    kind: 'sport',
    department: 'Sport',
    regular: 'Nets',
    scoreMax: 220,
  },
  {
    name: 'Tennis',
    code: 'TEN',
    emoji: '🎾',
    hexColor: '#C0CA33',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    scoreMax: 8,
  },
  {
    name: 'Hockey',
    code: 'HOC',
    emoji: '🏑',
    hexColor: '#00838F',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    positions: [
      ['Goalkeeper', 1],
      ['Defender', 4],
      ['Midfielder', 4],
      ['Striker', 2],
    ],
    scoreMax: 6,
  },
  {
    name: 'Volleyball',
    code: 'VB',
    emoji: '🏐',
    hexColor: '#1565C0',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    scoreMax: 3,
  },
  {
    name: 'Water Polo',
    code: 'WP',
    emoji: '🤽',
    hexColor: '#0277BD',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
    scoreMax: 14,
  },
  {
    name: 'Rowing',
    code: 'ROW',
    emoji: '🚣',
    hexColor: '#283593',
    kind: 'sport',
    department: 'Sport',
    regular: 'Training',
  },
  {
    name: 'Choir',
    code: 'CH',
    emoji: '🎤',
    hexColor: '#D81B60',
    kind: 'music',
    department: 'Music',
    regular: 'Rehearsal',
    positions: [
      ['Soprano', 12],
      ['Alto', 12],
      ['Tenor', 8],
      ['Bass', 8],
    ],
  },
  {
    name: 'String Orchestra',
    code: 'SO',
    emoji: '🎻',
    hexColor: '#6D4C41',
    kind: 'music',
    department: 'Music',
    regular: 'Rehearsal',
    positions: [
      ['Violin I', 8],
      ['Violin II', 8],
      ['Viola', 4],
      ['Cello', 4],
      ['Double Bass', 2],
    ],
  },
  {
    name: 'Jazz Ensemble',
    code: 'JE',
    emoji: '🎷',
    hexColor: '#37474F',
    kind: 'music',
    department: 'Music',
    regular: 'Rehearsal',
  },
  {
    name: 'School Musical',
    code: 'MUS',
    emoji: '🎭',
    hexColor: '#8E24AA',
    kind: 'drama',
    department: 'Performing Arts',
    regular: 'Rehearsal',
  },
  {
    name: 'Dance Company',
    code: 'DAN',
    emoji: '💃',
    hexColor: '#EC407A',
    kind: 'drama',
    department: 'Performing Arts',
    regular: 'Rehearsal',
  },
  {
    name: "Duke of Edinburgh's Award",
    code: 'DOE',
    emoji: '🥾',
    hexColor: '#558B2F',
    kind: 'outdoor',
    department: 'Outdoor Education',
    regular: 'Session',
  },
  {
    name: 'Rock Climbing',
    code: 'RC',
    emoji: '🧗',
    hexColor: '#795548',
    kind: 'outdoor',
    department: 'Outdoor Education',
    regular: 'Session',
  },
  {
    name: 'Chess Club',
    code: 'CHS',
    emoji: '♟️',
    hexColor: '#212121',
    kind: 'club',
    department: 'Academic Extension',
    regular: 'Meeting',
  },
  {
    name: 'Robotics',
    code: 'ROB',
    emoji: '🤖',
    hexColor: '#546E7A',
    kind: 'club',
    department: 'Academic Extension',
    regular: 'Build session',
  },
  {
    name: 'Mathematics Olympiad',
    code: 'MO',
    emoji: '➗',
    hexColor: '#3949AB',
    kind: 'club',
    department: 'Academic Extension',
    regular: 'Problem session',
  },
  {
    name: 'Community Service',
    code: 'CS',
    emoji: '🤝',
    hexColor: '#00897B',
    kind: 'service',
    department: 'Service & Community',
    regular: 'Volunteering',
  },
  {
    name: 'Environment Club',
    code: 'ENV',
    emoji: '🌱',
    hexColor: '#43A047',
    kind: 'service',
    department: 'Service & Community',
    regular: 'Meeting',
  },
];

/** Home venues (owned by the school, listed by GET /locations). */
export const HOME_VENUES = [
  { name: 'Main Oval', address: '1 College Road, Hillcrest NSW 2150', sub: ['North field', 'South field'] },
  { name: 'Sports Centre — Court 1', address: '1 College Road, Hillcrest NSW 2150', sub: null },
  { name: 'Sports Centre — Court 2', address: '1 College Road, Hillcrest NSW 2150', sub: null },
  { name: 'Aquatic Centre', address: '3 College Road, Hillcrest NSW 2150', sub: ['Lanes 1–4', 'Dive pool'] },
  { name: 'Music School — Ensemble Room', address: '1 College Road, Hillcrest NSW 2150', sub: null },
  { name: 'Great Hall', address: '1 College Road, Hillcrest NSW 2150', sub: ['Stage', 'Green room'] },
  { name: 'Library Seminar Room', address: '1 College Road, Hillcrest NSW 2150', sub: null },
  { name: 'Tennis Courts', address: '5 Parkside Avenue, Hillcrest NSW 2150', sub: null },
  { name: 'Boatshed', address: '40 Riverside Drive, Putney NSW 2112', sub: null },
  { name: 'Science Block — Lab 4', address: '1 College Road, Hillcrest NSW 2150', sub: null },
  { name: 'Hillcrest Community Garden', address: '12 Victoria Street, Hillcrest NSW 2150', sub: null },
  { name: 'Old Gymnasium', address: '1 College Road, Hillcrest NSW 2150', sub: null },
] as const;

export const OPPONENT_SCHOOLS = [
  ["St Mary's College", 'SMC', "St Mary's"],
  ['Kingsford Grammar School', 'KGS', 'Kingsford'],
  ['Riverside High School', 'RHS', 'Riverside'],
  ['Mount Carmel Academy', 'MCA', 'Mt Carmel'],
  ['Ashfield Boys High', 'ABH', 'Ashfield'],
  ['Lycée Condorcet Sydney', 'LCS', 'Condorcet'],
  ['Barker Ridge College', 'BRC', 'Barker Ridge'],
  ['Northern Beaches Christian School', 'NBCS', 'NB Christian'],
  ['Te Kura o Ōtautahi', 'TKO', 'Ōtautahi'],
  ['Ravenswood School for Girls', 'RSG', 'Ravenswood'],
] as const;

// What a session's notes, uniform and venue say depends on the kind of activity (a choir is never told to bring
// mouthguards; basketball is not played in concert blacks at the pool). Each list is drawn from with one pick.
// Empty strings: sessions with no note.
const STAFF_NOTES: Record<ActivityKind, readonly string[]> = {
  sport: [
    'Cones and bibs in the PE store.',
    'Check medical forms before the session.',
    'Two coaches needed — swap with Thursday group if short.',
    'First-aid kit restocked; ice packs in freezer.',
    '',
    '',
  ],
  music: [
    'Stands and folders in the Ensemble Room store.',
    'Tune up before the start.',
    'Check the piano is unlocked.',
    '',
    '',
  ],
  drama: [
    'Scripts in the green room.',
    'Lighting desk booked from 4 pm.',
    'Check the stage is clear of set pieces.',
    '',
    '',
  ],
  club: [
    'Laptops charged in the trolley.',
    'Room booked until 5 pm.',
    'Collect permission slips for the competition.',
    '',
    '',
  ],
  outdoor: [
    'Check medical forms before the session.',
    'First-aid kit and radios from the office.',
    'Collect permission slips for the trip.',
    '',
    '',
  ],
  service: [
    'Sign-in sheet at the front desk.',
    'Collect permission slips for the outing.',
    'Gloves and tools in the garden shed.',
    '',
    '',
  ],
};

const PARENT_NOTES: Record<ActivityKind, readonly string[]> = {
  sport: [
    'Bring a water bottle, hat and sunscreen.',
    'Please arrive 10 minutes early.',
    'Full training kit, boots and shin pads where your sport uses them.',
    'Pick-up from the College Road gate.',
    '',
    '',
    '',
  ],
  music: [
    'Bring your instrument and music folder.',
    'Please arrive 10 minutes early to set up.',
    'Practise the new pieces at home this week.',
    'Pick-up from the College Road gate.',
    '',
    '',
  ],
  drama: [
    'Bring your script and a water bottle.',
    'Wear clothes you can move in.',
    'Lines for Act 1 learnt by this session, please.',
    'Pick-up from the College Road gate.',
    '',
    '',
  ],
  club: [
    'Bring your laptop, charged.',
    'Bring a pencil case and calculator.',
    'Pick-up from the College Road gate.',
    '',
    '',
  ],
  outdoor: [
    'Bring a water bottle, hat and sunscreen.',
    'Closed-toe shoes required.',
    'Pack a rain jacket.',
    'Pick-up from the College Road gate.',
    '',
    '',
  ],
  service: [
    'Wear a hat and closed shoes.',
    'Bring gardening gloves if you have them.',
    'Pick-up from the College Road gate.',
    '',
    '',
  ],
};

/** Sports played in contact where mouthguards are compulsory (their parents' notes say so). */
const CONTACT_SPORTS = new Set(['Rugby Union', 'Hockey']);

export function staffNotesFor(activity: ActivitySpec): readonly string[] {
  return STAFF_NOTES[activity.kind];
}

export function parentNotesFor(activity: ActivitySpec): readonly string[] {
  const notes = PARENT_NOTES[activity.kind];
  return CONTACT_SPORTS.has(activity.name) ? ['Mouthguards compulsory.', ...notes.slice(1)] : notes;
}

/** What to wear: for sport, training kit at training and the team's home or away kit at fixtures. */
export function uniformsFor(
  activity: ActivitySpec,
  occasion: 'regular' | 'home' | 'away',
): readonly string[] {
  switch (activity.kind) {
    case 'sport':
      return occasion === 'home'
        ? ['Home kit']
        : occasion === 'away'
          ? ['Away kit']
          : ['Training kit', 'Sports uniform'];
    case 'music':
      return ['Full school uniform', 'Full school uniform', 'Concert blacks'];
    case 'drama':
      return ['Rehearsal blacks', 'Comfortable clothes you can move in'];
    case 'outdoor':
      return ['Sports uniform', 'Long pants, closed-toe shoes and a hat'];
    default:
      return ['Full school uniform'];
  }
}

/** One-off sessions with no team (students put on directly): what each kind of activity holds. */
const ONE_OFFS: Record<ActivityKind, readonly string[]> = {
  sport: ['Trials', 'Information evening', 'Team photos', 'Carnival', 'Skills clinic', 'Trials'],
  music: ['Auditions', 'Information evening', 'Showcase', 'Workshop', 'Masterclass', 'Auditions'],
  drama: ['Auditions', 'Information evening', 'Showcase', 'Workshop', 'Costume fitting', 'Auditions'],
  club: ['Information evening', 'Workshop', 'Competition', 'Open day'],
  outdoor: ['Information evening', 'Gear check', 'Skills workshop', 'Parent briefing'],
  service: ['Information evening', 'Volunteer training', 'Open day', 'Workshop'],
};

export function oneOffsFor(activity: ActivitySpec): readonly string[] {
  return ONE_OFFS[activity.kind];
}

/** Where an activity meets at home; by kind where the activity has no venue of its own. */
const VENUES_BY_ACTIVITY: Record<string, readonly string[]> = {
  Football: ['Main Oval'],
  'Rugby Union': ['Main Oval'],
  Cricket: ['Main Oval'],
  Hockey: ['Main Oval'],
  Netball: ['Sports Centre — Court 1', 'Sports Centre — Court 2'],
  Basketball: ['Sports Centre — Court 1', 'Sports Centre — Court 2'],
  Volleyball: ['Sports Centre — Court 1', 'Sports Centre — Court 2', 'Old Gymnasium'],
  Tennis: ['Tennis Courts'],
  'Water Polo': ['Aquatic Centre'],
  Rowing: ['Boatshed'],
  Robotics: ['Science Block — Lab 4'],
  'Rock Climbing': ['Old Gymnasium'],
};
const VENUES_BY_KIND: Record<ActivityKind, readonly string[]> = {
  sport: ['Main Oval'],
  music: ['Music School — Ensemble Room', 'Great Hall'],
  drama: ['Great Hall', 'Old Gymnasium'],
  club: ['Library Seminar Room'],
  outdoor: ['Old Gymnasium', 'Main Oval'],
  service: ['Hillcrest Community Garden', 'Library Seminar Room'],
};

export function venuesFor(activity: ActivitySpec): readonly string[] {
  return VENUES_BY_ACTIVITY[activity.name] ?? VENUES_BY_KIND[activity.kind];
}

export const ABSENCE_REASONS = [
  'Orthodontist appointment',
  'Family travel',
  'Illness — doctor’s certificate provided',
  'Representing the state team',
  'Religious observance',
  'Family event (wedding in Hà Nội)',
  'Physiotherapy',
  'Music examination (AMEB)',
  'Bereavement',
];
