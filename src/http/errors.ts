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

export const invalidPersonalKey = () =>
  new ApiError(401, 'authentication_error', 'invalid_personal_api_key', 'Invalid personal API key.', undefined);

export const notFound = (detail = 'Not found.') => new ApiError(404, 'invalid_request', 'not_found', detail, null);

export const permissionDenied = (detail: string) =>
  new ApiError(403, 'authentication_error', 'permission_denied', detail, null);

export const serviceUnavailable = (detail: string) =>
  new ApiError(503, 'server_error', 'service_unavailable', detail, undefined);
