/**
 * A lean keep-alive load generator for small request/response benchmarks: each connection is a
 * raw TCP socket that writes a pre-encoded HTTP/1.1 request and reads just enough of the answer
 * (status, Content-Length or chunked framing) to know where it ends. node:http's client spends
 * more CPU per request than a fast server does, and it shares the machine's cores with the
 * server, so with it the generator, not the server, sets the ceiling. Same options and
 * results as load.ts.
 */
import net from 'node:net';
import type { LoadOptions, LoadResult } from './load.js';

const HEADER_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

/** Where one HTTP response ends in `data`, and its status; null while it is incomplete. */
function responseEnd(data: Buffer): { end: number; status: number; close: boolean } | null {
  const headerEnd = data.indexOf(HEADER_END);
  if (headerEnd < 0) return null;
  const head = data.toString('latin1', 0, headerEnd);
  const status = Number(head.slice(9, 12));
  const close = /\r\nconnection: *close/i.test(head);
  const length = /\r\ncontent-length: *(\d+)/i.exec(head);
  const bodyStart = headerEnd + 4;
  if (length) {
    const end = bodyStart + Number(length[1]);
    return data.length >= end ? { end, status, close } : null;
  }
  if (!/\r\ntransfer-encoding: *chunked/i.test(head)) return { end: bodyStart, status, close };
  // Chunked: size line, data, CRLF … until the zero-size chunk and its final CRLF.
  let at = bodyStart;
  for (;;) {
    const lineEnd = data.indexOf(CRLF, at);
    if (lineEnd < 0) return null;
    const size = parseInt(data.toString('latin1', at, lineEnd), 16);
    if (size === 0) {
      const trailerEnd = data.indexOf(CRLF, lineEnd + 2);
      return trailerEnd < 0 ? null : { end: trailerEnd + 2, status, close };
    }
    at = lineEnd + 2 + size + 2;
    if (data.length < at) return null;
  }
}

export async function runSocketLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const port = Number(target.port || 80);
  const head = (length: number) =>
    `${options.method ?? 'POST'} ${target.pathname}${target.search} HTTP/1.1\r\nhost: ${target.host}\r\n` +
    Object.entries(options.headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    `content-length: ${length}\r\nconnection: keep-alive\r\n\r\n`;
  const result: LoadResult = { requests: 0, errors: 0, statusCounts: {}, seconds: 0, latenciesMs: [] };
  const deadline = options.durationMs ? Date.now() + options.durationMs : Infinity;
  const started = process.hrtime.bigint();

  const connection = () =>
    new Promise<void>((done) => {
      const open = (): void => {
        let pending: Buffer = Buffer.alloc(0);
        let sentAt = 0n;
        let inFlight = false;
        let finished = false;
        const socket = net.connect({ host: target.hostname, port, noDelay: true });
        const send = (): void => {
          const body = Date.now() < deadline ? options.bodies() : null;
          if (!body) {
            finished = true;
            socket.end();
            return done();
          }
          sentAt = process.hrtime.bigint();
          inFlight = true;
          socket.write(Buffer.concat([Buffer.from(head(body.length), 'latin1'), body]));
        };
        socket.on('connect', send);
        socket.on('data', (chunk: Buffer) => {
          pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
          const response = responseEnd(pending);
          if (!response) return;
          result.latenciesMs.push(Number(process.hrtime.bigint() - sentAt) / 1e6);
          result.requests += 1;
          result.statusCounts[response.status] = (result.statusCounts[response.status] ?? 0) + 1;
          inFlight = false;
          pending = pending.subarray(response.end);
          if (!response.close) return send();
          finished = true;
          socket.destroy();
          open();
        });
        socket.on('error', () => {});
        // Closed by the other side or a failure: count a request it cut off, then carry on with a
        // new connection (after a pause, so a refused connection does not spin).
        socket.on('close', () => {
          if (finished) return;
          if (inFlight) result.errors += 1;
          if (Date.now() >= deadline) return done();
          setTimeout(open, inFlight ? 0 : 10);
        });
      };
      open();
    });

  await Promise.all(Array.from({ length: options.connections }, connection));
  result.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return result;
}
