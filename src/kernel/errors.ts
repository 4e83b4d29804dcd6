import type { FastifyError } from 'fastify';

/**
 * The one error type every layer throws when a request cannot be served.
 * Serialised as the spec's DRF-style body: {type, code, detail, attr}.
 */
export type ErrorType =
  | 'validation_error'
  | 'authentication_error'
  | 'invalid_request'
  | 'throttled_error'
  | 'server_error';

export class ApiError extends Error {
  /** Offending field; `undefined` omits the key (authentication errors), `null` sends null. */
  readonly attr: string | null | undefined;
  readonly headers: Record<string, string>;

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
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

export const validationError = (detail: string, attr: string | null = null, code = 'invalid_input') =>
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

export const serviceUnavailable = (detail: string) =>
  new ApiError(503, 'server_error', 'service_unavailable', detail, undefined);

/** Maps anything thrown into the spec's error shape; unknown errors become a logged 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as FastifyError & { validation?: { instancePath?: string; params?: Record<string, unknown> }[] };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return payloadTooLarge();
  if (e.code === 'FST_ERR_BAD_URL') return new ApiError(400, 'invalid_request', 'invalid_url', 'Malformed URL: invalid percent-encoding.', null);
  if (e.code === 'FST_ERR_MAX_PARAM_LENGTH') return new ApiError(414, 'invalid_request', 'uri_too_long', 'A path segment of the URL is too long.', null);
  if (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e instanceof SyntaxError) {
    return new ApiError(400, 'validation_error', 'parse_error', `Malformed JSON body: ${e.message}`, null);
  }
  if (e.validation) {
    const first = e.validation[0];
    const attr = (first?.instancePath ?? '').replace(/^\//, '').replace(/\//g, '__') || (first?.params?.missingProperty as string | undefined) || null;
    return new ApiError(400, 'validation_error', 'invalid_input', e.message, attr);
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'invalid_request', 'unsupported_media_type', e.message, null);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode, 'invalid_request', e.code?.toLowerCase() ?? 'invalid_request', e.message, null);
  }
  return new ApiError(500, 'server_error', 'error', 'A server error occurred.', null);
}
