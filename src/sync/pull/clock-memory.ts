// Each upstream client's memory of the upstream's clock (upstream/clock.ts ClockMemory). A school has one client
// for the life of the process (sync/school-upstream.ts), so this is per school per process, and it goes with it.
import type { UpstreamClient } from '../../upstream/api.ts';
import { ClockMemory } from '../../upstream/clock.ts';

const memories = new WeakMap<UpstreamClient, ClockMemory>();

export function clockMemoryOf(client: UpstreamClient): ClockMemory {
  let m = memories.get(client);
  if (!m) {
    m = new ClockMemory();
    memories.set(client, m);
  }
  return m;
}
