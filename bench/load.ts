/**
 * A small keep-alive HTTP load generator (node:http, no dependencies): N concurrent
 * connections each send requests back to back, and we record per-request latency.
 */
import http from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  statusCounts: Record<string, number>;
  seconds: number;
  latenciesMs: number[];
}

export interface LoadOptions {
  url: string;
  connections: number;
  /** Either a fixed number of requests (bodies used in order) or a duration. */
  bodies: () => Buffer | null;
  headers: Record<string, string>;
  method?: string;
  durationMs?: number;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const result: LoadResult = { requests: 0, errors: 0, statusCounts: {}, seconds: 0, latenciesMs: [] };
  const deadline = options.durationMs ? Date.now() + options.durationMs : Infinity;
  const started = process.hrtime.bigint();

  const one = (body: Buffer) =>
    new Promise<void>((resolve) => {
      const t0 = process.hrtime.bigint();
      const request = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname + target.search,
          method: options.method ?? 'POST',
          agent,
          headers: { ...options.headers, 'content-length': String(body.length) },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            result.latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
            result.requests += 1;
            const key = String(response.statusCode);
            result.statusCounts[key] = (result.statusCounts[key] ?? 0) + 1;
            resolve();
          });
        },
      );
      request.on('error', () => {
        result.errors += 1;
        resolve();
      });
      request.end(body);
    });

  const worker = async () => {
    while (Date.now() < deadline) {
      const body = options.bodies();
      if (!body) return;
      await one(body);
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  result.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return result;
}
