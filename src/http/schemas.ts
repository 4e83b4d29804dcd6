/**
 * JSON-schema pieces shared by the /api/ route modules. The same schemas validate requests,
 * shape responses (fields not listed are never sent) and feed the OpenAPI document.
 */
export type JsonSchema = Record<string, unknown>;

export const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });

/** An object whose listed properties are all required unless named in `optional`. */
export const object = (properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((key) => !optional.includes(key)),
  additionalProperties: false,
});

/** A request body: every field optional, unknown fields dropped (DRF ignores them too). */
export const patchBody = (properties: Record<string, JsonSchema>): JsonSchema => object(properties, Object.keys(properties));

export const uuid: JsonSchema = { type: 'string', format: 'uuid' };
export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const level: JsonSchema = { type: 'integer', enum: [1, 8, 15], description: '1 member, 8 admin, 15 owner' };
export const tags: JsonSchema = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 255 }, maxItems: 100 };
/** Tags as stored: trimmed, blanks and repeats dropped, case kept. */
export const cleanTags = (list: string[] | undefined) => list && [...new Set(list.map((tag) => tag.trim()).filter(Boolean))];

/** A path parameter that is an id or the `@current` alias. */
export const idOrCurrent = (description: string): JsonSchema => ({ type: 'string', maxLength: 200, description });

export const params = (names: Record<string, string>): JsonSchema =>
  object(Object.fromEntries(Object.entries(names).map(([name, description]) => [name, idOrCurrent(description)])));

export const errorBody: JsonSchema = {
  type: 'object',
  description: 'Error: {type, code, detail, attr}',
  properties: {
    type: { type: 'string' },
    code: { type: 'string' },
    detail: { type: 'string' },
    attr: { type: ['string', 'null'] },
  },
  required: ['type', 'code', 'detail'],
};

export const errorResponses: Record<number, JsonSchema> = {
  400: errorBody,
  401: errorBody,
  403: errorBody,
  404: errorBody,
  429: errorBody,
};

export const noContent: JsonSchema = { type: 'null', description: 'No content' };

export const userBasic: JsonSchema = object({
  id: { type: 'integer' },
  uuid,
  distinct_id: { type: 'string' },
  first_name: { type: 'string' },
  last_name: { type: 'string' },
  email: { type: 'string', format: 'email' },
  is_email_verified: { type: 'boolean' },
});
