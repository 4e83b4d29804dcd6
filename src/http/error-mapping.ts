/**
 * Anything a request handler, Fastify or Node may throw, in the API's one error shape. The
 * mapping of Fastify's own errors lives here, beside the server, so the kernel knows nothing of
 * Fastify.
 */
import type { FastifyError } from 'fastify';
import { ApiError, payloadTooLarge } from '../kernel/errors.js';

/** Maps anything thrown into the API's one error shape; unknown errors become a logged 500. */
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
    return new ApiError(e.statusCode, 'invalid_request', 'bad_request', e.message, null);
  }
  return new ApiError(500, 'server_error', 'error', 'A server error occurred.', null);
}
