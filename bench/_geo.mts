import { GeoIp, applyGeoIp } from '../src/ingest/geoip.js';
import { makeEvent } from './events-gen.js';
import { normalizeEvent } from '../src/ingest/normalize.js';
const geo = await GeoIp.open();
const evs = [];
for (let i = 0; i < 20000; i++) { const o = normalizeEvent(makeEvent(i, 3000) as any, { sentAt: null, now: new Date(), ip: '1.2.3.4' }); if (o.ok) evs.push(o.value); }
for (let r = 0; r < 3; r++) {
  let t = performance.now();
  for (const e of evs.slice(r*5000, r*5000+5000)) geo.lookup(e.properties.$ip as string);
  const look = performance.now() - t;
  t = performance.now();
  for (const e of evs.slice(r*5000, r*5000+5000)) applyGeoIp(e.properties, geo);
  console.log('lookup µs/ev', (look/5).toFixed(2), 'apply µs/ev', ((performance.now() - t)/5).toFixed(2));
}
const geo2 = geo.lookup('81.2.69.142')!;
let t = performance.now();
for (const e of evs.slice(15000, 17000)) Object.assign(e.properties, geo2);
console.log('assign µs', ((performance.now() - t) / 2).toFixed(2));
t = performance.now();
for (const e of evs.slice(17000, 19000)) { const s = e.properties.$set as any; for (let k = 0; k < 15; k++) s['$geoip_k' + k] = 1; }
console.log('set loop µs', ((performance.now() - t) / 2).toFixed(2));
console.log(Object.keys(evs[0].properties).length, Object.keys(evs[0].properties.$set as any).length, Object.keys(evs[0].properties.$set_once as any).length);
const fresh = [];
for (let i = 0; i < 4000; i++) { const o = normalizeEvent(makeEvent(i + 50000, 3000) as any, { sentAt: null, now: new Date(), ip: '1.2.3.4' }); if (o.ok) fresh.push(o.value); }
t = performance.now();
for (const e of fresh.slice(0, 2000)) { const p = e.properties as any; p.__d = 1; delete p.__d; Object.assign(p, geo2); }
console.log('dict-mode assign µs', ((performance.now() - t) / 2).toFixed(2));
t = performance.now();
for (const e of fresh.slice(2000, 4000)) { const p = e.properties as any; for (const k in geo2) p[k] = (geo2 as any)[k]; }
console.log('for-in assign µs', ((performance.now() - t) / 2).toFixed(2));
