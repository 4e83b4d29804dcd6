/** Flag evaluation for HTTP requests: cached flags, stored properties, the pure engine. */
export { FlagService, EVALUATE_OPTIONS } from './service.js';
export { projectFlags, type ProjectFlags } from './flag-cache.js';
export type { FlagEvaluation, FlagRequest } from './types.js';
