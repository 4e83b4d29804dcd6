/**
 * Limit/offset pagination with DRF's envelope `{count, next, previous, results}`. The links are
 * absolute URLs of the same request with only `limit`/`offset` replaced (DRF rules: `previous`
 * drops `offset` when it would be 0; both are null at the ends).
 */
import type { FastifyRequest } from 'fastify';
import type { Page, PageOf } from '../store/types.js';
import type { ApiKit } from './auth.js';
import { validationError } from '../kernel/errors.js';
import { publicBase } from './public-url.js';
import type { JsonSchema } from './schemas.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/** Querystring properties every list route declares. */
export const pageQuery: Record<string, JsonSchema> = {
  limit: { type: 'integer', minimum: 1, default: DEFAULT_LIMIT, description: `Page size (default ${DEFAULT_LIMIT}; more than ${MAX_LIMIT} is taken as ${MAX_LIMIT}).` },
  offset: { type: 'integer', minimum: 0, default: 0, description: 'Index of the first result.' },
};

export const paginated = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  properties: {
    count: { type: 'integer' },
    next: { type: ['string', 'null'], format: 'uri' },
    previous: { type: ['string', 'null'], format: 'uri' },
    results: { type: 'array', items: item },
  },
  required: ['count', 'next', 'previous', 'results'],
});

export function integer(raw: unknown, attr: string, min: number, max: number, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw validationError(`A valid integer between ${min} and ${max} is required.`, attr);
  }
  return value;
}

/** A page size of at least 1; a larger one than `max` gets `max`, as DRF's paginators clamp it. */
export function pageLimit(raw: unknown, max: number, fallback: number): number {
  return Math.min(max, integer(raw, 'limit', 1, Number.MAX_SAFE_INTEGER, fallback));
}

/** The page asked for; route schemas validate first, this also guards routes without one. */
export function readPage(query: unknown): Page {
  const q = (query ?? {}) as Record<string, unknown>;
  return {
    limit: pageLimit(q.limit, MAX_LIMIT, DEFAULT_LIMIT),
    offset: integer(q.offset, 'offset', 0, Number.MAX_SAFE_INTEGER, 0),
  };
}

/** The first page and the rest, for lists small enough to hold in memory. */
export const slicePage = <T>(items: T[], page: Page): PageOf<T> => ({
  count: items.length,
  results: items.slice(page.offset, page.offset + page.limit),
});

// Query parameters never copied into links: a key given in the query must not travel on.
const SECRET_PARAMETERS = ['personal_api_key'];

export function link(request: FastifyRequest, api: ApiKit, set: Record<string, string | number | null>): string {
  const base = publicBase(request, api.publicUrl);
  const [path, query = ''] = request.url.split('?', 2);
  const params = new URLSearchParams(query);
  for (const name of SECRET_PARAMETERS) params.delete(name);
  for (const [name, value] of Object.entries(set)) {
    if (value === null) params.delete(name);
    else params.set(name, String(value));
  }
  params.sort();
  return `${base}${path}?${params.toString()}`;
}

export function envelope<T>(request: FastifyRequest, api: ApiKit, page: Page, result: PageOf<T>) {
  const { limit, offset } = page;
  const next = offset + limit >= result.count ? null : link(request, api, { limit, offset: offset + limit });
  const previous = offset <= 0 ? null : link(request, api, { limit, offset: offset - limit > 0 ? offset - limit : null });
  return { count: result.count, next, previous, results: result.results };
}
