// Audit records of what is done at the command line (`rostercal roster`, `rostercal feeds rotate`): no web
// session and no client address, so the actor names the operating-system account that ran the command.
import { userInfo } from 'node:os';
import type { AuditRecord, Store } from '../store/types.ts';

export function commandLineActor(): string {
  let user = 'unknown user';
  try {
    user = userInfo().username || user;
  } catch {}
  return `command line (${user})`;
}

export async function auditCommandLine(
  store: Pick<Store, 'access'>,
  rec: Pick<AuditRecord, 'action' | 'schoolId'> &
    Partial<Pick<AuditRecord, 'teamId' | 'sessionId' | 'template' | 'detail'>>,
): Promise<void> {
  await store.access.appendAudit({
    at: new Date().toISOString(),
    actor: commandLineActor(),
    teamId: null,
    sessionId: null,
    template: null,
    clientAddress: null,
    staffSession: null,
    detail: null,
    ...rec,
  });
}
