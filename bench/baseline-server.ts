/**
 * The baseline: a bare node:http server that only does the unavoidable work of a capture
 * request (read the body, gunzip, JSON.parse) and answers 200. Run as its own process, like
 * the service, so both are measured the same way in the same run.
 */
import http from 'node:http';
import zlib from 'node:zlib';

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    let body = Buffer.concat(chunks);
    if (body[0] === 0x1f && body[1] === 0x8b) body = zlib.gunzipSync(body);
    const parsed = JSON.parse(body.toString('utf8')) as { batch?: unknown[] };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ status: 1, n: Array.isArray(parsed.batch) ? parsed.batch.length : 1 }));
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`listening ${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
