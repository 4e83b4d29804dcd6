/**
 * The one error type every layer throws when a request cannot be served.
 * Serialised as PostHog's DRF-style body (github.com/PostHog/drf-exceptions-hog):
 * {type, code, detail, attr}.
 */
export type ErrorType =
  | 'validation_error'
  | 'authentication_error'
  | 'invalid_request'
  | 'throttled_error'
  | 'server_error';

/**
 * Every code an error body may carry. Closed on purpose: a client can rely on the list, and a
 * new code is a decision made here, not a string typed in a handler.
 */
export type ErrorCode =
  // 400
  | 'invalid_input'
  | 'required'
  | 'unique'
  | 'invalid_choice'
  | 'invalid_key'
  | 'invalid_operator'
  | 'invalid_value'
  | 'invalid_date'
  | 'invalid'
  | 'blank'
  | 'max_length'
  | 'not_a_list'
  | 'parse_error'
  | 'invalid_payload'
  | 'invalid_project'
  | 'missing_distinct_id'
  | 'invalid_url'
  | 'bad_request'
  // 400, the web app's sign-in and invite links
  | 'invalid_credentials'
  | 'password_invalid'
  | 'password_not_set'
  | 'invite_expired'
  // 401, 403
  | 'invalid_api_key'
  | 'invalid_personal_api_key'
  | 'permission_denied'
  | 'csrf_failed'
  // 404, 405, 408, 413, 414, 415, 429, 431, 499
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'request_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'throttled'
  | 'request_header_fields_too_large'
  | 'client_closed_request'
  // 5xx
  | 'error'
  | 'service_unavailable'
  | 'shutting_down'
  | 'out_of_memory'
  | 'query_timeout'
  | 'meta_store_unavailable'
  | 'event_store_unavailable';

export class ApiError extends Error {
  /** Offending field; `undefined` omits the key (authentication errors), `null` sends null. */
  readonly attr: string | null | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: ErrorCode,
    readonly detail: string,
    // A rest tuple, not a default: an explicit `undefined` must mean "omit attr", not null.
    ...rest: [attr?: string | null | undefined, headers?: Record<string, string>]
  ) {
    super(detail);
    this.name = 'ApiError';
    this.attr = rest.length === 0 ? null : rest[0];
    this.headers = rest[1] ?? {};
  }

  toBody(): Record<string, unknown> {
    const body: Record<string, unknown> = { type: this.type, code: this.code, detail: this.detail };
    if (this.attr !== undefined) body.attr = this.attr;
    return body;
  }
}

export const validationError = (detail: string, attr: string | null = null, code: ErrorCode = 'invalid_input') =>
  new ApiError(400, 'validation_error', code, detail, attr);

export const invalidPayload = (detail: string) =>
  new ApiError(400, 'validation_error', 'invalid_payload', `Malformed request data: ${detail}`, null);

export const payloadTooLarge = (detail = 'Request body is larger than the allowed limit.') =>
  new ApiError(413, 'validation_error', 'request_too_large', detail, null);

export const invalidProjectKey = () =>
  new ApiError(
    401,
    'authentication_error',
    'invalid_api_key',
    'Project API key invalid. You can find your project API key in Sightline project settings.',
    undefined,
  );

export const invalidPersonalKey = (detail = 'Invalid personal API key.') =>
  new ApiError(401, 'authentication_error', 'invalid_personal_api_key', detail, undefined);

/** Capture with a personal API key whose `project_id` names no project the key may write to. */
export const invalidProject = (detail: string) => new ApiError(400, 'validation_error', 'invalid_project', detail, 'project_id');

export const notFound = (detail = 'Not found.') => new ApiError(404, 'invalid_request', 'not_found', detail, null);

export const permissionDenied = (detail: string) =>
  new ApiError(403, 'authentication_error', 'permission_denied', detail, null);

/** `retryAfterSeconds` is sent as Retry-After, which SDKs honour before they retry. */
export const serviceUnavailable = (detail: string, retryAfterSeconds?: number) =>
  new ApiError(503, 'server_error', 'service_unavailable', detail, undefined, retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) });

/**
 * A store's server cannot be reached right now (stopped, restarting, a lost connection): the same
 * request may succeed in a moment, so it is a 503 with Retry-After, never a 500. Recognised by
 * name, as the other store failures are, since errors cross worker threads as plain Errors.
 */
export type StoreUnavailable = 'MetaStoreUnavailableError' | 'EventStoreUnavailableError';

export function storeUnavailable(name: StoreUnavailable, cause: unknown): Error {
  const reason = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
  const code = (cause as { code?: unknown })?.code;
  return Object.assign(new Error(reason, { cause }), { name, ...(typeof code === 'string' && { code }) });
}

export const isStoreUnavailable = (error: unknown, name?: StoreUnavailable): boolean =>
  error instanceof Error && (name ? error.name === name : error.name === 'MetaStoreUnavailableError' || error.name === 'EventStoreUnavailableError');

/** How soon a client should try again after a store was unreachable. */
const STORE_RETRY_AFTER_SECONDS = 1;

/** The API's answer to a store that cannot be reached: 503 naming which store, with Retry-After. */
export function storeUnavailableError(error: Error): ApiError {
  const meta = error.name === 'MetaStoreUnavailableError';
  const which = meta ? 'metadata store' : 'event store';
  return new ApiError(503, 'server_error', meta ? 'meta_store_unavailable' : 'event_store_unavailable', `The ${which} cannot be reached right now (${error.message}); retry in a moment.`, null, {
    'retry-after': String(STORE_RETRY_AFTER_SECONDS),
  });
}
