/**
 * The server benchmarks measure: the compiled `dist/`, started as `npm start` starts it, built
 * once per benchmark process so that it matches the source being measured.
 */
import { execFileSync } from 'node:child_process';
import { startServer, type StartOptions, type TestServer } from '../test/helpers/server.js';

let built = false;

export async function startBenchServer(options: StartOptions = {}): Promise<TestServer> {
  if (!built) {
    execFileSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
    built = true;
  }
  return startServer({ ...options, entry: 'build' });
}
