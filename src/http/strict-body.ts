/**
 * Fastify's validator coerces types ("true" → true, "x" → ["x"]) so that query strings work;
 * a JSON body has real types, so a field sent with the wrong one is refused with its name in
 * `attr` before the coercing validator runs.
 */
import type { FastifyRequest } from 'fastify';
import { validationError } from '../kernel/errors.js';
import type { JsonSchema } from './schemas.js';

const isType: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  boolean: (value) => typeof value === 'boolean',
  integer: (value) => Number.isInteger(value),
  number: (value) => typeof value === 'number',
  array: Array.isArray,
  object: (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  null: (value) => value === null,
};

const typesOf = (schema: JsonSchema) => [schema.type ?? []].flat() as string[];

/** The value has one of the schema's types, and so do its items when it is an array. */
function fits(schema: JsonSchema, value: unknown): boolean {
  const types = typesOf(schema);
  if (types.length > 0 && !types.some((type) => isType[type]?.(value))) return false;
  const items = schema.items as JsonSchema | undefined;
  return !(Array.isArray(value) && items) || value.every((item) => fits(items, item));
}

/** "string or null", "list of string". */
const describe = (schema: JsonSchema): string => {
  const items = schema.items as JsonSchema | undefined;
  return typesOf(schema)
    .map((type) => (type === 'array' && items ? `list of ${describe(items)}` : type))
    .join(' or ');
};

export function rejectCoercion(schema: JsonSchema) {
  const fields = Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>);
  return async (request: FastifyRequest): Promise<void> => {
    const body = request.body;
    if (!isType.object(body)) return; // the validator reports a body that is not an object
    for (const [name, field] of fields) {
      if (name in (body as object) && !fits(field, (body as Record<string, unknown>)[name])) {
        throw validationError(`Invalid type: expected ${describe(field)}.`, name);
      }
    }
  };
}
