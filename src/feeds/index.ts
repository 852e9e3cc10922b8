export { feedsAfterPull } from './after-pull.ts';
export { AUDIENCE_OF, type FeedDef, getFeedDef, listFeedDefs, sessionQuery } from './catalog.ts';
export { DEFAULT_MAX_BYTES, type IcsCalendarInfo, type RenderedIcs, renderIcs } from './ics.ts';
export { FeedService, type FeedServiceOptions, type FeedWindow, type RenderedFeed } from './service.ts';
export { vtimezone, zonedDate } from './timezone.ts';
export {
  deriveToken,
  FEED_SCOPES,
  FeedTokens,
  hashToken,
  isFeedScope,
  loadFeedSecret,
  resolveFeedToken,
  tokenForLog,
} from './tokens.ts';
