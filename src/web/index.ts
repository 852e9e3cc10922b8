export { type AppOptions, createApp, redactPath } from './app.ts';
export { chooseEncoding, feedsRouter } from './feeds-router.ts';
export { healthRoutes, type ReadinessOptions, syncProblem } from './health.ts';
export { escapeHtml, landingPage, subscribeLinks } from './landing.ts';
export { createMetrics, type Metrics } from './metrics.ts';
export { rateLimit } from './rate-limit.ts';
export { closeOnSignals, type RunningServer, startServer } from './server.ts';
