// Side-effect module: importing it adds pushing to `rostercal sync` (after the pull, with --dry-run & co.).
import { registerAfterPull } from '../sync/after-pull.ts';
import { pushStep } from './hooks.ts';

registerAfterPull(pushStep);
