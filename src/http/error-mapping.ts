/**
 * Anything a request handler, Fastify or Node may throw, in the API's one error shape. The
 * mapping of Fastify's own errors lives here, beside the server, so the kernel knows nothing of
 * Fastify.
 */
import type { FastifyError } from 'fastify';
import { ApiError, isStoreUnavailable, payloadTooLarge, storeUnavailableError, type ErrorCode } from '../kernel/errors.js';

/** One schema violation as Fastify's validator reports it. */
interface SchemaViolation {
  keyword?: string;
  instancePath?: string;
  params?: Record<string, unknown>;
}

const TYPE_SENTENCES: Record<string, string> = {
  integer: 'A valid integer is required.',
  number: 'A valid number is required.',
  boolean: 'Must be a valid boolean (true or false).',
  string: 'Not a valid string.',
  array: 'Expected a list of items.',
  object: 'Expected an object (a dictionary of items).',
  null: 'Must be null.',
};

/**
 * A schema violation as DRF would word it: a sentence a person understands, the parameter
 * as `attr` (nested fields joined by `__`), `required` for a missing one, `invalid_choice` for
 * a value outside a list. The schema's own wording ("querystring/limit must be >= 1") is never
 * shown.
 */
export function schemaError(violation: SchemaViolation | undefined): ApiError {
  const params = violation?.params ?? {};
  const path = (violation?.instancePath ?? '').replace(/^\//, '').split('/').filter(Boolean).join('__');
  const missing = typeof params.missingProperty === 'string' ? params.missingProperty : null;
  const attr = missing !== null ? [path, missing].filter(Boolean).join('__') : path || null;
  const [code, detail] = describeViolation(violation?.keyword, params, attr);
  return new ApiError(400, 'validation_error', code, detail, attr);
}

function describeViolation(keyword: string | undefined, params: Record<string, unknown>, attr: string | null): [ErrorCode, string] {
  const limit = params.limit as number | undefined;
  switch (keyword) {
    case 'required':
      return ['required', attr ? `"${attr}" is required.` : 'This field is required.'];
    case 'type': {
      const type = String(params.type ?? '').split(',')[0];
      return ['invalid_input', TYPE_SENTENCES[type] ?? `Must be of type ${params.type}.`];
    }
    case 'enum':
    case 'const': {
      const allowed = (params.allowedValues as unknown[] | undefined) ?? (params.allowedValue !== undefined ? [params.allowedValue] : []);
      return ['invalid_choice', `Not a valid choice. Choose one of: ${allowed.map((value) => JSON.stringify(value)).join(', ')}.`];
    }
    case 'minimum':
      return ['invalid_input', `Ensure this value is greater than or equal to ${limit}.`];
    case 'exclusiveMinimum':
      return ['invalid_input', `Ensure this value is greater than ${limit}.`];
    case 'maximum':
      return ['invalid_input', `Ensure this value is less than or equal to ${limit}.`];
    case 'exclusiveMaximum':
      return ['invalid_input', `Ensure this value is less than ${limit}.`];
    case 'minLength':
      return limit === 1 ? ['blank', 'This field may not be blank.'] : ['invalid_input', `Ensure this field has at least ${limit} characters.`];
    case 'maxLength':
      return ['max_length', `Ensure this field has no more than ${limit} characters.`];
    case 'minItems':
      return ['invalid_input', `Ensure this list has at least ${limit} items.`];
    case 'maxItems':
      return ['invalid_input', `Ensure this list has no more than ${limit} items.`];
    case 'pattern':
      return ['invalid_input', 'This value is not in the expected format.'];
    case 'format':
      return ['invalid_input', `Enter a valid ${String(params.format ?? 'value')}.`];
    case 'additionalProperties':
      return ['invalid_input', `Unexpected field "${String(params.additionalProperty)}".`];
    default:
      return ['invalid_input', 'This value is not valid.'];
  }
}

/** Maps anything thrown into the API's one error shape; unknown errors become a logged 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (isStoreUnavailable(error)) return storeUnavailableError(error as Error);
  const e = error as FastifyError & { validation?: SchemaViolation[] };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return payloadTooLarge();
  if (e.code === 'FST_ERR_BAD_URL') return new ApiError(400, 'invalid_request', 'invalid_url', 'Malformed URL: invalid percent-encoding.', null);
  if (e.code === 'FST_ERR_MAX_PARAM_LENGTH') return new ApiError(414, 'invalid_request', 'uri_too_long', 'A path segment of the URL is too long.', null);
  if (e.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || e instanceof SyntaxError) {
    return new ApiError(400, 'validation_error', 'parse_error', `Malformed JSON body: ${e.message}`, null);
  }
  if (e.validation) return schemaError(e.validation[0]);
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'invalid_request', 'unsupported_media_type', e.message, null);
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode, 'invalid_request', 'bad_request', e.message, null);
  }
  return new ApiError(500, 'server_error', 'error', 'A server error occurred.', null);
}
