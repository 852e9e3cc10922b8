// `npm run check` fails on any import cycle in src/ (type-only imports count too: a cycle of types is still two
// modules that cannot be read one before the other), and on any import that runs back up the house.
//
// The house, bottom floor first: a room (a top-level folder or file of src/) imports only rooms on lower floors.
// Rooms on one floor are peers and do not import each other either. A new room goes on the lowest floor above
// everything it imports; docs/architecture.md draws the same list.
const FLOORS = [
  ['util', 'domain'],
  ['terminal.ts', 'validation.ts', 'private-files.ts', 'log-text.ts'],
  ['log.ts'],
  // the upstream API's client, and its emulator (the demo's and the tests', loaded lazily by production code)
  ['upstream', 'sandbox'],
  ['store'],
  // what reads the snapshot without changing it: the projection, staff identity, counters
  ['calendar', 'identity', 'metrics.ts'],
  // the typed configuration (config.ts) and its parts (config/)
  [['config.ts', 'config']],
  // what pull and push share: the job contract, heartbeat, window, after-pull steps
  ['jobs'],
  // what is made from the snapshot: feeds (ICS) and rosters (PDF)
  ['feeds', 'rosters'],
  // pull and push: peers, so neither borrows from the other (what both need is in jobs/); families: what a family
  // writes upstream from its calendar page (a reported absence), beside them
  ['sync', 'push', 'families'],
  ['web'],
  ['running-service.ts'],
  ['cli'],
  ['main.ts'],
];

const pattern = (part) => (part.endsWith('.ts') ? `^src/${part.replace('.', '\\.')}$` : `^src/${part}/`);
const roomPattern = (room) => [room].flat().map(pattern).join('|');
const rooms = FLOORS.flatMap((floor, level) => floor.map((room) => ({ room, level })));

const layerRules = rooms.map(({ room, level }) => {
  const above = rooms.filter((other) => other.room !== room && other.level >= level);
  return {
    name: `up-from-${[room].flat()[0]}`,
    severity: 'error',
    comment:
      'This import runs back up the house (or across to a peer): move what both need down a floor, or hand it in ' +
      'from the composition root (.dependency-cruiser.cjs lists the floors).',
    from: { path: roomPattern(room) },
    to: { path: above.map((other) => roomPattern(other.room)).join('|') },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules import each other: move what both need into a module of its own.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-unplaced-room',
      severity: 'error',
      comment:
        'A top-level folder or file of src/ that is on no floor: add it to FLOORS in .dependency-cruiser.cjs.',
      from: { path: '^src/', pathNot: rooms.map(({ room }) => roomPattern(room)).join('|') },
      to: {},
    },
    {
      name: 'provider-to-provider',
      severity: 'error',
      comment:
        'One push provider imports another: what both need belongs in src/push/ (behind provider.ts), not in a ' +
        "provider's folder.",
      from: { path: '^src/push/(google|outlook)/' },
      to: { path: '^src/push/(google|outlook)/', pathNot: '^src/push/$1/' },
    },
    {
      name: 'push-into-provider',
      severity: 'error',
      comment:
        'The push run reaches into a provider: it talks to providers only through provider.ts, and providers.ts ' +
        '(or the live calendar rotation, which closes a Google calendar) loads them on demand.',
      from: {
        path: '^src/',
        pathNot: '^src/push/(google|outlook)/|^src/push/(providers|live-rotation)\\.ts$',
      },
      to: { path: '^src/push/(google|outlook)/' },
    },
    ...layerRules.filter((rule) => rule.to.path !== ''),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
