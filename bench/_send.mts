import zlib from 'node:zlib';
import { makeEvent } from './events-gen.js';
let i = 0;
const bodies = [];
for (let b = 0; b < 30; b++) { const batch = []; for (let e = 0; e < 1000; e++) batch.push(makeEvent(i++, 3000)); bodies.push(zlib.gzipSync(JSON.stringify({ api_key: 'phc_bench', batch }))); }
const t0 = Date.now();
for (const body of bodies) await fetch(`http://127.0.0.1:8823/batch/`, { method: 'POST', body, headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' } });
console.log('total', Date.now() - t0);
