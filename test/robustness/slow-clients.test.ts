/**
 * Slow and abusive clients: slowloris headers and bodies are cut off by the header
 * and request timeouts (408 in the API's error shape, then the socket is closed) while normal
 * clients keep being served; the connection cap refuses connections past it without
 * disturbing the ones it holds; the /api/ rate limit throttles one personal key (429 with
 * Retry-After) and leaves the others alone.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';

import { assertSpecReply, metric, request } from '../helpers/robustness.js';
import { startServer, type TestServer } from '../helpers/server.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const MAX_CONNECTIONS = 24;
const RATE_LIMIT = 10;

let server: TestServer;
/** The connection cap gets its own server: the short timeouts above would close held idle connections. */
let capped: TestServer;

before(async () => {
  [server, capped] = await Promise.all([
    startServer({
      env: {
        SIGHTLINE_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        SIGHTLINE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        SIGHTLINE_API_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
        SIGHTLINE_GEOIP: 'false',
      },
    }),
    startServer({ env: { SIGHTLINE_MAX_CONNECTIONS: String(MAX_CONNECTIONS), SIGHTLINE_GEOIP: 'false' } }),
  ]);
});

after(async () => {
  const codes = await Promise.all([server?.stop(), capped?.stop()]);
  assert.deepEqual(codes, [0, 0]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Drip {
  /** Resolves when the server closes the connection: what it sent and after how long. */
  closed: Promise<{ answer: string; afterMs: number }>;
  socket: net.Socket;
}

/** Connects and sends `head` at once, then `drip` one byte every `everyMs` until closed. */
function drip(head: string, dripText: string, everyMs: number): Drip {
  const socket = net.connect(server.port, '127.0.0.1');
  const started = Date.now();
  let answer = '';
  let timer: NodeJS.Timeout | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (chunk) => (answer += chunk));
  const closed = new Promise<{ answer: string; afterMs: number }>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ answer, afterMs: Date.now() - started });
    });
    socket.on('error', () => undefined);
  });
  socket.on('connect', () => {
    socket.write(head);
    if (!dripText) return;
    let i = 0;
    timer = setInterval(() => {
      if (socket.destroyed || socket.writableEnded) return clearInterval(timer);
      socket.write(dripText[i++ % dripText.length]);
    }, everyMs);
  });
  return { closed, socket };
}

/** The 408 Node's parser reports, in the API's error shape, and nothing else. */
function assertTimedOut(answer: string, label: string): void {
  const [head, body = ''] = answer.split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 408 /, `${label}: expected a 408, got ${JSON.stringify(answer.slice(0, 200))}`);
  assertSpecReply({ status: 408, headers: new Headers(), text: body, json: JSON.parse(body) }, label);
}

/** Events acknowledged by `server`: the only ones it may have stored. */
let acknowledged = 0;

async function normalCapture(target = server): Promise<void> {
  const reply = await request(target, 'POST', '/capture/', {
    body: JSON.stringify({ api_key: target.projectKey, event: 'normal', distinct_id: 'normal' }),
    headers: { 'content-type': 'application/json' },
    timeoutMs: 5_000,
  });
  assert.equal(reply.status, 200, reply.text);
  if (target === server) acknowledged++;
}

test('slowloris headers (one byte every 100 ms) are cut off by the headers timeout; others are served meanwhile', async () => {
  const clients = Array.from({ length: 8 }, () => drip('POST /capture/ HTTP/1.1\r\nHost: x\r\n', 'X-Slow: aaaaaaaaaaaaaaaa\r\n', 100));
  // Normal traffic alongside is answered at once.
  for (let i = 0; i < 5; i++) {
    await normalCapture();
    await sleep(100);
  }
  for (const client of clients) {
    const { answer, afterMs } = await client.closed;
    assertTimedOut(answer, 'slow headers');
    // Node checks timeouts on an interval (a tenth of the smallest one, see server.ts).
    assert.ok(afterMs >= HEADERS_TIMEOUT_MS - 100, `cut off too early: ${afterMs} ms`);
    assert.ok(afterMs < HEADERS_TIMEOUT_MS + 1_500, `cut off after ${afterMs} ms, headers timeout ${HEADERS_TIMEOUT_MS} ms`);
  }
  await normalCapture();
});

test('a body slower than the request timeout is cut off; the events of that request are not stored', async () => {
  const body = JSON.stringify({ api_key: server.projectKey, event: 'slow-body', distinct_id: 'slow' });
  const head = `POST /capture/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length + 1000}\r\n\r\n`;
  const clients = Array.from({ length: 4 }, () => drip(head, body, 100));
  await sleep(300);
  await normalCapture();
  for (const client of clients) {
    const { answer, afterMs } = await client.closed;
    assertTimedOut(answer, 'slow body');
    assert.ok(afterMs >= REQUEST_TIMEOUT_MS - 100, `cut off too early: ${afterMs} ms`);
    assert.ok(afterMs < REQUEST_TIMEOUT_MS + 1_500, `cut off after ${afterMs} ms, request timeout ${REQUEST_TIMEOUT_MS} ms`);
  }
  // An idle connection that never sends anything is closed too.
  const idle = drip('', '', 60_000);
  const { afterMs } = await idle.closed;
  assert.ok(afterMs < REQUEST_TIMEOUT_MS + 1_500, `idle connection kept for ${afterMs} ms`);
  await normalCapture();
  const metrics = await request(server, 'GET', '/metrics');
  assert.equal(metric(metrics.text, 'sightline_events_ingested_total'), acknowledged, 'only acknowledged events were stored');
});

test(`the connection cap (${MAX_CONNECTIONS}) refuses extra connections while the ones it holds keep working`, async () => {
  // Connections the test's own fetch keeps alive count too: open until refused, then some more.
  await normalCapture(capped);
  const held: net.Socket[] = [];
  let refused = 0;
  for (let i = 0; i < MAX_CONNECTIONS + 8; i++) {
    const socket = net.connect(capped.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const outcome = await new Promise<'held' | 'refused'>((resolve) => {
      socket.once('close', () => resolve('refused'));
      socket.once('connect', () => setTimeout(() => resolve(socket.destroyed ? 'refused' : 'held'), 150));
    });
    if (outcome === 'held') held.push(socket);
    else refused++;
  }
  try {
    assert.ok(held.length <= MAX_CONNECTIONS, `${held.length} connections held, cap ${MAX_CONNECTIONS}`);
    assert.ok(refused >= 8, `only ${refused} connections refused past the cap`);
    // Every held connection still serves requests (keep-alive, one after the other).
    for (const socket of held) {
      const answer = await new Promise<string>((resolve, reject) => {
        let data = '';
        const onData = (chunk: Buffer) => {
          data += chunk.toString('latin1');
          if (/\r\n\r\n[\s\S]*"status"/.test(data)) {
            socket.off('data', onData);
            resolve(data);
          }
        };
        socket.on('data', onData);
        socket.once('close', () => reject(new Error(`held connection closed: ${data}`)));
        socket.write('GET /_health HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      assert.match(answer, /^HTTP\/1\.1 200 /);
    }
  } finally {
    for (const socket of held) socket.destroy();
  }
  // Once connections are released, new ones are accepted again.
  await sleep(200);
  await normalCapture(capped);
});

test(`the /api/ rate limit (${RATE_LIMIT}/min per personal key) answers 429 with Retry-After; other keys are unaffected`, async () => {
  const auth = (key: string) => ({ authorization: `Bearer ${key}` });
  // A second key of the same user, created first so that its creation is within budget.
  const created = await request(server, 'POST', '/api/personal_api_keys/', {
    body: JSON.stringify({ label: 'second' }),
    headers: { ...auth(server.personalKey), 'content-type': 'application/json' },
  });
  assert.equal(created.status, 201, created.text);
  const other: string = created.json.value;

  let first429: Awaited<ReturnType<typeof request>> | undefined;
  let served = 1;
  for (let i = 0; i < RATE_LIMIT + 5; i++) {
    const reply = await request(server, 'GET', '/api/projects/', { headers: auth(server.personalKey) });
    if (reply.status === 200) served++;
    else {
      first429 ??= reply;
      assert.equal(reply.status, 429, reply.text);
    }
  }
  assert.equal(served, RATE_LIMIT, 'requests served within the window');
  assert.ok(first429, 'no 429 past the limit');
  assertSpecReply(first429, '429');
  assert.equal(first429.json.type, 'throttled_error');
  assert.equal(first429.json.code, 'throttled');
  const retryAfter = Number(first429.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After: ${first429.headers.get('retry-after')}`);

  // Another key of the same user has its own budget; capture and health are never throttled.
  const mine = await request(server, 'GET', '/api/projects/', { headers: auth(other) });
  assert.equal(mine.status, 200, mine.text);
  await normalCapture();
  assert.equal((await request(server, 'GET', '/_health')).status, 200);
  // Requests without a key are not counted (they fail authentication): still 401, not 429.
  assert.equal((await request(server, 'GET', '/api/projects/')).status, 401);
  // The throttled key stays throttled for the rest of its window.
  assert.equal((await request(server, 'GET', '/api/projects/', { headers: auth(server.personalKey) })).status, 429);
});

test('a body just over the 20 MB limit gets a 413 the client reads (drained, not reset): /decide, /flags, /api/ JSON', async () => {
  // Answering while the client still uploads resets the connection, and the client sees a
  // network error instead of the 413; the reset depends on timing, hence five tries per route.
  // (On the server without the short timeouts and the small /api/ rate limit.)
  const pad = 'x'.repeat(20 * 1024 * 1024);
  const routes: [string, string, Record<string, string>][] = [
    ['/decide?v=3', `{"api_key":"${capped.projectKey}","distinct_id":"d","pad":"${pad}"}`, {}],
    ['/flags?v=2', `{"token":"${capped.projectKey}","distinct_id":"d","pad":"${pad}"}`, {}],
    ['/api/projects/@current/feature_flags/', `{"key":"too-big","name":"${pad}"}`, { authorization: `Bearer ${capped.personalKey}` }],
  ];
  for (const [path, body, headers] of routes) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const reply = await request(capped, 'POST', path, { body, headers: { 'content-type': 'application/json', ...headers } });
      assert.equal(reply.status, 413, `${path} → ${reply.status} ${reply.text.slice(0, 200)}`);
      assert.equal(reply.json.code, 'request_too_large');
      assertSpecReply(reply, path);
    }
  }
});
