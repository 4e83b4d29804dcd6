/** Flag evaluation for HTTP requests: cached flags, stored properties, the pure engine. */
export { FlagService } from './service.js';
export { ALL_PROJECTS } from './flag-cache.js';
export type { FlagEvaluation, FlagRequest } from './types.js';
