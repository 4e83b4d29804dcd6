/**
 * Pagination links: a personal key given in the query never travels into them (nor into any
 * header or log line), and a `Host` header can only ever be a host in them.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { ingest } from '../helpers/api-fixtures.js';
import { startServer, type TestServer } from '../helpers/server.js';

let server: TestServer;

before(async () => {
  server = await startServer();
  await ingest(server, Array.from({ length: 3 }, (_, i) => ({ event: 'seen', distinct_id: `u${i}`, properties: { [`p${i}`]: i } })));
});

after(async () => {
  await server?.stop();
});

/** A raw GET with any Host header (fetch would not send an arbitrary one). */
function get(path: string, host: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: server.port, path, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

const LISTS = ['/api/projects/@current/property_definitions/?limit=1&offset=1', '/api/projects/@current/events/?limit=1'];

describe('pagination links', () => {
  it('never carry a personal API key given as ?personal_api_key=, nor does any header or log line', async () => {
    // The first start prints the generated keys once; nothing after that may.
    const logged = server.output().length;
    for (const list of LISTS) {
      const response = await get(`${list}&personal_api_key=${server.personalKey}`, `127.0.0.1:${server.port}`);
      assert.equal(response.status, 200, response.body);
      const body = JSON.parse(response.body);
      assert.ok(body.next, `${list} has a next link`);
      assert.ok(!response.body.includes(server.personalKey), `${list} answered ${response.body}`);
      assert.ok(!JSON.stringify(response.headers).includes(server.personalKey));
      // The link still works: it needs the key again, from the header.
      const next = await fetch(body.next, { headers: { authorization: `Bearer ${server.personalKey}` } });
      assert.equal(next.status, 200);
    }
    const unknownRoute = await get(`/api/nope/?personal_api_key=${server.personalKey}`, `127.0.0.1:${server.port}`);
    assert.ok(!unknownRoute.body.includes(server.personalKey));
    assert.ok(!server.output().slice(logged).includes(server.personalKey), 'the key appears in the server log');
  });

  it('take the Host header as the DRF does, but only when it is a plain host[:port]', async () => {
    const plain = JSON.parse((await get(`${LISTS[1]}&personal_api_key=${server.personalKey}`, 'analytics.example.com:8443')).body);
    assert.match(plain.next, /^http:\/\/analytics\.example\.com:8443\/api\/projects\/@current\/events\/\?cursor=/);

    for (const host of ['evil.test/steal?x=', 'evil.test"}, "injected": {"', 'user:pw@evil.test', 'evil.test#', 'a b']) {
      const response = await get(`${LISTS[0]}&personal_api_key=${server.personalKey}`, host);
      assert.equal(response.status, 400, `Host ${JSON.stringify(host)} → ${response.status} ${response.body}`);
      const body = JSON.parse(response.body);
      assert.equal(body.code, 'invalid_input');
      assert.match(body.detail, /Host header/);
    }
  });
});
