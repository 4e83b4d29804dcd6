/**
 * Starts a worker thread from a module next to the caller. Built code runs the compiled `.js`
 * file; when the caller itself runs from TypeScript source (tests, benchmarks under tsx), the
 * worker loads tsx first: Node 20 does not apply the parent's `--import` hooks to a worker's
 * entry module.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(callerUrl: string, baseName: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith('.ts')) return new Worker(new URL(`./${baseName}.js`, callerUrl), options);
  const entry = new URL(`./${baseName}.ts`, callerUrl).href;
  const script = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(script, { ...options, eval: true });
}
