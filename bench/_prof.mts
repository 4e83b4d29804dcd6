import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);
import zlib from 'node:zlib';
import { startServer } from '../test/helpers/server.js';
import { makeEvent } from './events-gen.js';
const server = await startServer({ env: { SIGHTLINE_LOG_LEVEL: 'debug' } });
let i = 0;
const bodies = [];
for (let b = 0; b < 40; b++) { const batch = []; for (let e = 0; e < 1000; e++) batch.push(makeEvent(i++, 3000)); bodies.push(zlib.gzipSync(JSON.stringify({ api_key: server.projectKey, batch }))); }
const t0 = Date.now();
for (const body of bodies) {
  const t = Date.now();
  const r = await fetch(`${server.url}/batch/`, { method: 'POST', body, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } });
}
console.log('total', Date.now() - t0, 'ms for 40k events');
const st = require_status(server.process.pid);
await server.stop();
console.log(st);
console.log(server.output().split('\n').filter(l=>l.includes('"flush"')).slice(-5).join('\n'));
function require_status(pid) { return (await_read(`/proc/${pid}/status`)).split('\n').filter(l=>/VmHWM|VmRSS/.test(l)).join(' '); }
function await_read(p) { return require('fs').readFileSync(p,'utf8'); }
