/**
 * Helpers for the management-API tests: tenants made with the real CLI against a running
 * server's data dir, ingestion through /batch/, error assertions and pagination walks.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestServer } from './server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

async function cli(server: TestServer, args: string[]): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args, '--json'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...server.storeEnv, SIGHTLINE_LOG_LEVEL: 'silent' },
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

export interface Tenant {
  organizationId: string;
  projectId: number;
  projectKey: string;
  ownerKey: string;
}

/** A second organization with its own project and owner, made by `sightline init`. */
export async function createTenant(server: TestServer, name: string): Promise<Tenant> {
  const out = await cli(server, ['init', '--org', name, '--project', `${name} project`, '--email', `owner@${name}.test`]);
  return { organizationId: out.organization_id, projectId: out.project_id, projectKey: out.project_api_key, ownerKey: out.personal_api_key };
}

/** A user added to an organization by `sightline users add`; returns their uuid and key. */
export async function addUser(server: TestServer, organizationId: string, email: string, level: 1 | 8 | 15): Promise<{ uuid: string; key: string }> {
  const out = await cli(server, ['users', 'add', '--org', organizationId, '--email', email, '--level', String(level)]);
  return { uuid: out.user_uuid, key: out.personal_api_key };
}

export interface EventInput {
  event: string;
  distinct_id?: string;
  properties?: Record<string, unknown>;
}

/** Ingests through /batch/ (the 200 comes after the commit, so reads right after see it). */
export async function ingest(server: TestServer, events: EventInput[], projectKey = server.projectKey): Promise<void> {
  const batch = events.map((e) => ({ distinct_id: 'user-1', ...e, properties: e.properties ?? {} }));
  const response = await server.post('/batch/', { api_key: projectKey, batch });
  assert.equal(response.status, 200, await response.text());
}

export async function json(response: Response): Promise<any> {
  const text = await response.text();
  return text === '' ? undefined : JSON.parse(text);
}

/** Asserts status and an error body `{type, code, detail, attr}`; returns the body. */
export async function expectError(response: Response, status: number, code: string, attr?: string | null): Promise<any> {
  const body = await json(response);
  assert.equal(response.status, status, JSON.stringify(body));
  assert.equal(body.code, code, JSON.stringify(body));
  assert.equal(typeof body.type, 'string');
  assert.equal(typeof body.detail, 'string');
  if (attr !== undefined) assert.equal(body.attr, attr, JSON.stringify(body));
  return body;
}

export async function expectOk(response: Response, status = 200): Promise<any> {
  const body = await json(response);
  assert.equal(response.status, status, JSON.stringify(body));
  return body;
}

/** Follows `next` links from a first page; returns every result and every page seen. */
export async function walk(server: TestServer, first: string, key?: string): Promise<{ results: any[]; pages: any[] }> {
  const pages: any[] = [];
  let url: string | null = server.url + first;
  while (url) {
    assert.ok(url.startsWith(server.url), `absolute link on this server: ${url}`);
    const page: any = await expectOk(await server.api(url.slice(server.url.length), { key }));
    pages.push(page);
    url = page.next;
  }
  return { results: pages.flatMap((p) => p.results), pages };
}

export const q = (value: unknown) => encodeURIComponent(typeof value === 'string' ? value : JSON.stringify(value));
