/**
 * A load balancer for tests: each HTTP request goes to the next of several Sightline nodes in
 * turn, as a round-robin balancer in front of stateless nodes sends them. Requests of one
 * keep-alive connection are spread too, so a test's writes and reads land on different nodes.
 * The client's Host header passes through, as balancers pass it, so links point at the proxy.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobinProxy {
  url: string;
  port: number;
  /** Requests sent to each node so far, in the order of `targets`. */
  counts(): number[];
  close(): Promise<void>;
}

export async function startRoundRobinProxy(targets: string[]): Promise<RoundRobinProxy> {
  const nodes = targets.map((target) => new URL(target));
  const sent = nodes.map(() => 0);
  const agent = new http.Agent({ keepAlive: true });
  let next = 0;
  const server = http.createServer({ maxHeaderSize: 1 << 20 }, (request, response) => {
    const index = next++ % nodes.length;
    sent[index]++;
    const node = nodes[index];
    const upstream = http.request(
      { host: node.hostname, port: node.port, method: request.method, path: request.url, headers: request.headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(response);
      },
    );
    upstream.on('error', (error) => {
      // A node that is down answers as a balancer with no healthy backend would.
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`proxy: ${error.message}`);
    });
    request.pipe(upstream);
  });
  // As long as the nodes' (65 s), whose Keep-Alive header passes through: with Node's 5 s, a client
  // whose event loop was busy for a few seconds sent its next request on a connection the proxy had
  // just closed, and it was reset.
  server.keepAliveTimeout = 70_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    counts: () => [...sent],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
