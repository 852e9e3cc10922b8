// Builds the provider a target's settings call for. Loaded on demand: Google's client is ~250 modules, and an
// Outlook-only deployment never needs it (nor Google-only the Graph SDK).

import type { PushTargetConfig } from '../config/push-targets.ts';
import type { SchoolId } from '../store/types.ts';
import type { PushProvider } from './provider.ts';

export async function createProvider(schoolId: SchoolId, target: PushTargetConfig): Promise<PushProvider> {
  if (target.provider === 'google') {
    const { GoogleProvider } = await import('./google/index.ts');
    return new GoogleProvider({
      schoolId,
      targetId: target.id,
      settings: target.google,
      delegated: target.scope === 'staff' && target.google.calendars.mode !== 'created',
    });
  }
  const { OutlookProvider } = await import('./outlook/index.ts');
  return new OutlookProvider({ schoolId, targetId: target.id, settings: target.outlook });
}
