// `rostercal sessions --team ID`: a team's upcoming sessions with their ids, dates and status, so a coach can
// pick the one to print (`rostercal roster --team ID --session ID`). Read from the local store.
import {
  createProjectionContext,
  decideSession,
  loadSchoolInfo,
  sessionTimeRangeZoned,
} from '../calendar/index.ts';
import { clockStartingAt } from '../config/sandbox-clock.ts';
// rosters/data.ts, not the rosters index: the index brings the PDF renderer (pdfkit, fontkit: ~60 modules) that
// listing sessions never uses.
import { defaultSession, RosterError, resolveSchool, upcomingSessions } from '../rosters/data.ts';
import { columns, printJson, printLines } from '../terminal.ts';
import { defineCommand, EXIT, idOption, numberOption, UsageError, withStore } from './command.ts';

const USAGE = `usage: rostercal sessions --team ID [--school ID] [--days N] [--json]

Lists a team's sessions that have not ended yet: id, date and time (school time), status and title (and why,
when cancelled). The one marked "next" is what an attendance sheet prints when no --session is given (the next
one not cancelled).
  --team ID     the team
  --school ID   the school (needed when the store holds several)
  --days N      how far ahead to look (default 60)
  --json        machine-readable output
  -h, --help    this help

Exit status: 0 done, 1 unknown team or school, 2 bad usage or configuration.`;

export const run = defineCommand({
  name: 'sessions',
  usage: USAGE,
  options: {
    team: { type: 'string' },
    school: { type: 'string' },
    days: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, config }) {
    const teamId = idOption('--team', values.team, 'team');
    if (teamId === undefined) throw new UsageError('say which team: --team ID');
    const days = numberOption('--days', values.days, { min: 1, max: 3660 }) ?? 60;
    const cfg = await config();
    return withStore(cfg, async (store) => {
      const school = await resolveSchool(
        store,
        values.school ?? (cfg.schools.length === 1 ? cfg.schools[0]!.id : null),
      );
      const team = await store.records.get(school.id, 'teams', teamId);
      if (!team || team.meta.deletedAt)
        throw new RosterError('unknown-team', `unknown team ${teamId} in school "${school.id}"`);
      // Upcoming from serve's own "now" (SANDBOX_NOW against the sandbox; else the real clock).
      const now = clockStartingAt(cfg.sandboxNow ?? null)();
      const sessions = await upcomingSessions(store, school.id, teamId, now, days);
      const next = defaultSession(sessions, { session: 'required' });
      const templates = cfg.schools.find((s) => s.id === school.id)?.eventTemplates;
      const ctx = createProjectionContext({
        school: await loadSchoolInfo(store, school.id),
        ...(templates ? { templates } : {}),
      });
      const day = new Intl.DateTimeFormat('en-GB', {
        timeZone: school.timeZone,
        weekday: 'short',
        day: '2-digit',
        month: 'short',
        year: 'numeric',
      });
      // What each session is (title, times, cancelled and why, result) is calendar/'s decision, as in every output.
      const rows = sessions.map((s) => {
        const d = decideSession(s, ctx, 'staff', { scope: 'team', id: teamId });
        return {
          id: s.id,
          start: s.start,
          end: s.end,
          date: day.format(new Date(s.start)),
          time: d.time,
          status: d.state,
          fixture: s.scored,
          where: d.where,
          result: d.result,
          cancellationReason: d.cancellationReason,
          next: s.id === next?.id,
          title: d.title,
        };
      });
      if (values.json) {
        printJson({ school: school.id, team: { id: team.id, name: team.name }, sessions: rows });
        return EXIT.ok;
      }
      const lines = [
        `${team.name} (team ${team.id}): ${rows.length} session${rows.length === 1 ? '' : 's'} in the next ${days} days (${school.timeZone})`,
      ];
      if (rows.length)
        lines.push(
          ...columns(
            ['ID', 'DATE', 'TIME', 'STATUS', '', 'TITLE'],
            rows.map((r) => [
              String(r.id),
              r.date,
              sessionTimeRangeZoned(r.start, r.end, school.timeZone),
              r.status.toUpperCase(),
              r.next ? 'next' : '',
              r.cancellationReason ? `${r.title} · ${r.cancellationReason}` : r.title,
            ]),
          ),
        );
      printLines(lines);
      return EXIT.ok;
    });
  },
});
