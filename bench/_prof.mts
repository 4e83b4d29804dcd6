import fs from 'node:fs';
import zlib from 'node:zlib';
import { startServer } from '../test/helpers/server.js';
import { makeEvent } from './events-gen.js';
import { runLoad } from './load.js';
const server = await startServer({ env: { SIGHTLINE_LOG_LEVEL: 'debug' } });
let i = 0;
const bodies: Buffer[] = [];
for (let b = 0; b < 60; b++) { const batch = []; for (let e = 0; e < 1000; e++) batch.push(makeEvent(i++, 3000)); bodies.push(zlib.gzipSync(JSON.stringify({ api_key: server.projectKey, batch }))); }
let n = 0;
const r = await runLoad({ url: `${server.url}/batch/`, connections: 4, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' }, bodies: () => bodies[n++] ?? null });
console.log('events/s', (60000 / r.seconds).toFixed(0));
console.log(fs.readFileSync(`/proc/${server.process.pid}/status`, 'utf8').split('\n').filter((l) => /VmHWM/.test(l)).join());
await server.stop();
console.log(server.output().split('\n').filter((l) => l.includes('"flush"')).slice(-6).map((l) => { const o = JSON.parse(l); return `${o.events} load ${o.loadMs} plan ${o.planMs} meta ${o.metaMs} events ${o.eventsMs}`; }).join('\n'));
