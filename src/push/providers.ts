// Builds the provider a target's settings call for.
import type { SchoolId } from '../store/types.ts';
import type { PushTargetConfig } from './config.ts';
import { GoogleProvider } from './google.ts';
import type { PushProvider } from './provider.ts';

export function createProvider(schoolId: SchoolId, target: PushTargetConfig): PushProvider {
  if (target.provider === 'google')
    return new GoogleProvider({
      schoolId,
      targetId: target.id,
      settings: target.google,
      delegated: target.scope === 'staff' && target.google.calendars.mode !== 'created',
    });
  throw new Error('outlook: not wired yet');
}
