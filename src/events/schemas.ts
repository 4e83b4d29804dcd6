/** Request and response schemas of the events routes (they also make the OpenAPI description). */
import { DEFAULT_CSV_LIMIT, DEFAULT_LIMIT, MAX_CSV_LIMIT, MAX_JSON_LIMIT } from './params.js';
import { DEFAULT_VALUES_LIMIT, MAX_VALUES_LIMIT } from './values.js';
import { nullable, object, uuid, type JsonSchema } from '../http/schemas.js';

const string = (description: string): JsonSchema => ({ type: 'string', description });
const freeObject: JsonSchema = { type: 'object', additionalProperties: true };
const nullableString: JsonSchema = { type: ['string', 'null'] };
const nullableInteger: JsonSchema = { type: ['integer', 'null'] };
const format: JsonSchema = { type: 'string', enum: ['json', 'csv'], description: 'json (default) or csv; Accept: text/csv also selects CSV' };

export const eventsQuerystring: JsonSchema = {
  type: 'object',
  properties: {
    after: string('Only events after this time: ISO 8601 (naive = UTC) or relative such as -7d, -24h'),
    before: string('Only events before this time: ISO 8601 (naive = UTC) or relative such as -7d, -24h'),
    distinct_id: string('Only events of this distinct id'),
    event: string('Only events with this name'),
    action_id: string('Only events matching this action (any of its steps)'),
    person_id: string("Person integer id or uuid: the events of every distinct id the person has now"),
    properties: string('JSON list of property filters {key, value, operator, type} (ANDed) or a group {type: AND|OR, values: […]}'),
    select: string('JSON list of HogQL expressions; rows come back as value lists in this order, with columns and types'),
    where: string('JSON list of HogQL conditions; all must hold'),
    orderBy: string('JSON list of HogQL expressions to order by, each with a leading `-` for descending (default ["-timestamp"]); pages then go by offset'),
    format,
    limit: {
      type: 'integer',
      minimum: 1,
      description: `Page size (default ${DEFAULT_LIMIT}, or ${DEFAULT_CSV_LIMIT} rows for CSV; more than ${MAX_JSON_LIMIT} for JSON, or ${MAX_CSV_LIMIT} for CSV, is taken as that)`,
    },
    offset: { type: 'integer', minimum: 0, description: 'Rows to skip (prefer the cursor of the next link)' },
    cursor: string('Position from a next/previous link'),
  },
};

export const valuesQuerystring: JsonSchema = {
  type: 'object',
  properties: {
    key: string('Event property name (required); with is_column, a column (event, distinct_id, …); `custom_event` lists the event names other than PostHog\'s core events'),
    is_column: string('true: key names a column of the event rather than a property'),
    event_name: { type: 'array', items: { type: 'string' }, description: 'Only events with these names (repeatable)' },
    value: string('Case-insensitive substring the value must contain'),
    limit: { type: 'integer', minimum: 1, maximum: MAX_VALUES_LIMIT, description: `Number of values (default ${DEFAULT_VALUES_LIMIT})` },
    format,
  },
};

const elementSchema = object({
  text: nullableString,
  tag_name: nullableString,
  attr_class: { type: ['array', 'null'], items: { type: 'string' } },
  href: nullableString,
  attr_id: nullableString,
  nth_child: nullableInteger,
  nth_of_type: nullableInteger,
  attributes: { type: 'object', additionalProperties: { type: 'string' } },
  order: { type: 'integer' },
});

const personSchema = nullable(
  object({
    is_identified: { type: 'boolean' },
    distinct_ids: { type: 'array', items: { type: 'string' } },
    properties: freeObject,
  }),
);

export const eventSchema = object({
  id: uuid,
  distinct_id: { type: 'string' },
  properties: freeObject,
  event: { type: 'string' },
  timestamp: string('ISO 8601 with offset, microseconds: 2026-11-22T01:02:03.456000+00:00'),
  person: personSchema,
  elements: { type: 'array', items: elementSchema },
  elements_chain: { type: 'string' },
});

export const listResponse: JsonSchema = {
  type: 'object',
  description: 'Events; with `select`, value lists plus `columns` and `types`. CSV when asked for.',
  properties: {
    count: { type: 'integer' },
    next: { type: ['string', 'null'], format: 'uri' },
    previous: { type: ['string', 'null'], format: 'uri' },
    columns: { type: 'array', items: { type: 'string' } },
    types: { type: 'array', items: { type: 'string' } },
    results: { type: 'array', items: { anyOf: [eventSchema, { type: 'array', items: {} }] } },
  },
  required: ['count', 'next', 'previous', 'results'],
};
