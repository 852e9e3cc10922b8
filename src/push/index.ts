// Pushing sessions into Google and Outlook calendars. What the rest of rostercal calls:
// - parseTargets (config validation), pushTarget / planTarget / formatPlan (one target),
// - pushSchool, pushAfterPull (scheduler onPull), pushJobs (scheduler extraJobs), and `./register.ts`
//   (side-effect import) for the `rostercal sync` step.
export type {
  GoogleTarget,
  OutlookTarget,
  PushTargetConfig,
} from './config.ts';
export { parseTargets, targetSchema, targetsSchema } from './config.ts';
export type { CalendarOutcome, PlannedOp, PushOptions, PushSummary } from './engine.ts';
export { formatPlan, planTarget, pushTarget, pushWindow } from './engine.ts';
export { pushAfterPull, pushJobs, pushSchool, pushStep, targetsOf } from './hooks.ts';
