/**
 * Shared by the robustness tests (hostile input, limits, isolation, storage faults): raw
 * requests with a hang deadline, the API's error-shape assertion, the /api/ route list from
 * the OpenAPI document, and the server process's memory from /proc.
 */
import assert from 'node:assert/strict';
import { v7 as uuidv7 } from 'uuid';
import { readReply, type RawResponse } from './ingest.js';
import type { TestServer } from './server.js';

export type Reply = RawResponse;

/** Any method, body and headers; a request that takes longer than `timeoutMs` is a hang. */
export async function request(
  server: TestServer,
  method: string,
  pathAndQuery: string,
  init: { body?: string | Uint8Array; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Reply> {
  const body = init.body === undefined || typeof init.body === 'string' ? init.body : new Uint8Array(init.body).buffer;
  let response: Response;
  try {
    response = await fetch(server.url + pathAndQuery, { method, headers: init.headers ?? {}, body, signal: AbortSignal.timeout(init.timeoutMs ?? 20_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : '';
    throw new Error(`${method} ${pathAndQuery.slice(0, 200)} failed: ${(error as Error).message}${why} (server alive: ${alive(server)})`);
  }
  return readReply(response);
}

export const alive = (server: TestServer) => server.process.exitCode === null && server.process.signalCode === null;

/**
 * 2xx, or 4xx with the API's error body: `type`, `code`, `detail` strings, and `attr` (string
 * or null) on everything but 401, where it is absent. `allow5xx` lists the 5xx a test expects.
 */
export function assertSpecReply(reply: Reply, label: string, options: { allow5xx?: number[] } = {}): void {
  const where = `${label} → ${reply.status} ${reply.text.slice(0, 300)}`;
  assert.ok(reply.status < 500 || options.allow5xx?.includes(reply.status), `unexpected 5xx: ${where}`);
  if (reply.status < 400) return;
  const body = reply.json;
  assert.ok(body && typeof body === 'object' && !Array.isArray(body), `error body is not a JSON object: ${where}`);
  for (const field of ['type', 'code', 'detail']) assert.equal(typeof body[field], 'string', `error body lacks ${field}: ${where}`);
  if (reply.status === 401 || reply.status === 503) {
    assert.ok(!('attr' in body), `attr must be absent on ${reply.status}: ${where}`);
  } else {
    assert.ok('attr' in body && (body.attr === null || typeof body.attr === 'string'), `attr must be a string or null: ${where}`);
  }
}

export interface ApiOperation {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** Fastify style: `/api/projects/:project_id/` */
  path: string;
  pathParams: string[];
  queryParams: string[];
  /** Query parameters the operation requires, with a value that passes validation. */
  requiredQuery: Record<string, string>;
  bodySchema: Record<string, any> | null;
  public: boolean;
  /** The key scopes it needs (`query:read`): a POST may be a read, as the query API is. */
  scopes: string[];
}

/** Every operation of GET /api/schema/ (the document is public). */
export async function apiOperations(server: TestServer): Promise<ApiOperation[]> {
  const reply = await request(server, 'GET', '/api/schema/');
  assert.equal(reply.status, 200, reply.text);
  const operations: ApiOperation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(reply.json.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'patch', 'delete', 'put'].includes(method)) continue;
      const parameters: { in: string; name: string; required?: boolean; description?: string; schema?: Record<string, any> }[] = op.parameters ?? [];
      operations.push({
        method: method.toUpperCase() as ApiOperation['method'],
        path: path.replace(/\{([^}]+)\}/g, ':$1'),
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        requiredQuery: Object.fromEntries(parameters.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, queryExample(p)])),
        bodySchema: op.requestBody?.content?.['application/json']?.schema ?? null,
        public: !op.security,
        scopes: (op.security ?? []).flatMap((requirement: Record<string, string[]>) => Object.values(requirement).flat()),
      });
    }
  }
  return operations;
}

function queryExample(parameter: { name: string; description?: string; schema?: Record<string, any> }): string {
  if (/JSON/i.test(parameter.description ?? '')) return encodeURIComponent(/list|array/i.test(parameter.description ?? '') ? '["example"]' : '{}');
  const type = [parameter.schema?.type].flat()[0];
  if (type === 'integer' || type === 'number') return '1';
  if (type === 'boolean') return 'true';
  return parameter.schema?.enum?.[0] ?? 'example';
}

/** `path` plus the operation's required query parameters (and `extra`). */
export function withQuery(path: string, op: ApiOperation, extra: Record<string, string> = {}): string {
  const query = Object.entries({ ...op.requiredQuery, ...extra }).map(([name, value]) => `${name}=${value}`);
  return query.length === 0 ? path : `${path}${path.includes('?') ? '&' : '?'}${query.join('&')}`;
}

/** Fills `:name` placeholders; values are URL-encoded unless `raw`. */
export function fillPath(path: string, values: Record<string, string>, raw = false): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = values[name];
    assert.ok(value !== undefined, `no value for path parameter ${name} of ${path}`);
    return raw ? value : encodeURIComponent(value);
  });
}

/** The collection a path parameter points into: `/api/projects/:id/events/:id2/` → `events` for id2. */
export function collectionOf(path: string, param: string): string {
  const parts = path.split('/').filter(Boolean);
  const index = parts.indexOf(`:${param}`);
  return parts[index - 1] ?? '';
}

/** A body that passes the schema: required fields only, from type, enum and format. */
export function minimalBody(schema: Record<string, any> | null, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of (schema?.required as string[] | undefined) ?? []) body[name] = exampleOf(schema!.properties[name], name);
  return { ...body, ...overrides };
}

function exampleOf(schema: Record<string, any>, name: string): unknown {
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const type = [schema.type].flat()[0];
  if (type === 'string') {
    if (schema.format === 'email') return `${name}-${uuidv7().slice(-12)}@robustness.test`;
    if (schema.format === 'uuid') return uuidv7();
    return `${name}-${uuidv7().slice(-8)}`;
  }
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  return {};
}

/** Percent-encodes any JS string, lone surrogates included (as their WTF-8 bytes). */
export function encodeAny(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(text[i]);
    }
  }
  return out;
}

export const newUuid = () => uuidv7();

/** Polls until `check` returns true, or fails with `what`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** One sample of a Prometheus text exposition (labels given in any order); 0 when absent. */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => have[key] === value)) {
      total += Number(match[3]);
      found = true;
    }
  }
  return found ? total : 0;
}
