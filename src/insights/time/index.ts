/** Date ranges and interval buckets in a project's time zone, shared by every insight kind. */
export * from './calendar.js';
export * from './date-range.js';
export * from './buckets.js';
