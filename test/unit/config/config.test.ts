import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig, type Machine } from '../../../src/config.js';

const GB = 2 ** 30;
/** A machine of 8 GB and 2 cores, with the cgroup limit given (bytes), or none. */
const machine = (cgroupBytes: number | null = null): Machine => ({
  cgroupLimit: () => (cgroupBytes === null ? null : { bytes: cgroupBytes, from: '/sys/fs/cgroup/memory.max' }),
  totalMemoryBytes: 8 * GB,
  cores: 2,
});

test('defaults when nothing is set', () => {
  const config = loadConfig({}, machine());
  assert.equal(config.host, '0.0.0.0');
  assert.equal(config.port, 8000);
  assert.equal(config.memory.limitMb, 512);
  assert.match(config.memory.source, /no memory limit found/);
  assert.equal(config.duckdbMemoryLimit, '64MB');
  assert.equal(config.duckdbThreads, 1);
  assert.equal(config.retentionDays, 0);
});

test('SIGHTLINE_DUCKDB_THREADS is read, and refused when it is not a positive integer', () => {
  assert.equal(loadConfig({ SIGHTLINE_DUCKDB_THREADS: '4' }).duckdbThreads, 4);
  for (const raw of ['0', '-1', 'two', '1.5']) {
    assert.throws(() => loadConfig({ SIGHTLINE_DUCKDB_THREADS: raw }), ConfigError, raw);
  }
});

test('SIGHTLINE_RETENTION_DAYS is read, and refused when it is not a whole number of days', () => {
  assert.equal(loadConfig({ SIGHTLINE_RETENTION_DAYS: '90' }).retentionDays, 90);
  for (const raw of ['-1', '1.5', 'ninety', '36501']) {
    assert.throws(() => loadConfig({ SIGHTLINE_RETENTION_DAYS: raw }), ConfigError, raw);
  }
});

test('SIGHTLINE_RETENTION_INTERVAL_SECONDS is an hour unless set, from a second to a day', () => {
  assert.equal(loadConfig({}).retentionIntervalSeconds, 3600);
  assert.equal(loadConfig({ SIGHTLINE_RETENTION_INTERVAL_SECONDS: '300' }).retentionIntervalSeconds, 300);
  for (const raw of ['0', '86401', 'often']) {
    assert.throws(() => loadConfig({ SIGHTLINE_RETENTION_INTERVAL_SECONDS: raw }), ConfigError, raw);
  }
});

test('SIGHTLINE_DROP_BOT_EVENTS is off unless set', () => {
  assert.equal(loadConfig({}).dropBotEvents, false);
  assert.equal(loadConfig({ SIGHTLINE_DROP_BOT_EVENTS: 'true' }).dropBotEvents, true);
  assert.throws(() => loadConfig({ SIGHTLINE_DROP_BOT_EVENTS: 'maybe' }), ConfigError);
});

test('SIGHTLINE_OWNER_EMAIL and SIGHTLINE_OWNER_PASSWORD: a default e-mail, no password unless set, refused when too short', () => {
  assert.equal(loadConfig({}).ownerEmail, 'admin@sightline.local');
  assert.equal(loadConfig({}).ownerPassword, undefined);
  assert.equal(loadConfig({ SIGHTLINE_OWNER_PASSWORD: ' a long passphrase ' }).ownerPassword, ' a long passphrase ', 'spaces are kept');
  assert.throws(() => loadConfig({ SIGHTLINE_OWNER_PASSWORD: 'short' }), /SIGHTLINE_OWNER_PASSWORD: .*at least 8/);
});

test('the memory budget comes from SIGHTLINE_MEMORY_LIMIT_MB, else the cgroup, else 512 MB, never more than the machine has', () => {
  assert.equal(loadConfig({ SIGHTLINE_MEMORY_LIMIT_MB: '2048' }, machine(GB)).memory.limitMb, 2048);
  const fromCgroup = loadConfig({}, machine(GB)).memory;
  assert.equal(fromCgroup.limitMb, 1024);
  assert.match(fromCgroup.source, /cgroup \(\/sys\/fs\/cgroup\/memory.max\)/);
  assert.equal(fromCgroup.cgroupLimitMb, 1024);
  assert.equal(loadConfig({}, { ...machine(), totalMemoryBytes: 400 * 2 ** 20 }).memory.limitMb, 400);
  assert.equal(loadConfig({}, machine(64 * GB)).memory.limitMb, 8192);
});

test('derived sizes follow the budget; explicit settings win over them', () => {
  const small = loadConfig({}, machine(320 * 2 ** 20));
  const large = loadConfig({}, machine(4 * GB));
  assert.ok(parseInt(small.duckdbMemoryLimit) < parseInt(large.duckdbMemoryLimit));
  assert.ok(small.maxPendingEvents < large.maxPendingEvents);
  assert.ok(small.recordMemoryBytes < large.recordMemoryBytes);
  assert.ok(small.eventStoreMaxLagBytes < large.eventStoreMaxLagBytes);
  assert.ok(small.personCacheSize < large.personCacheSize);
  assert.ok(small.geoipCacheEntries < large.geoipCacheEntries);
  assert.equal(small.flagThreads, 0, 'no room for flag threads in 320 MB');
  assert.equal(large.flagThreads, 2, 'one per core where memory allows');
  // Large machines get the former fixed defaults at most.
  assert.equal(large.maxPendingEvents <= 200_000 && large.personCacheSize <= 20_000 && large.flushMaxEvents <= 10_000, true);
  const explicit = loadConfig(
    { SIGHTLINE_DUCKDB_MEMORY_LIMIT: '1GB', SIGHTLINE_MAX_PENDING_EVENTS: '500000', SIGHTLINE_FLAG_THREADS: '3', SIGHTLINE_PERSON_CACHE_SIZE: '7', SIGHTLINE_FLUSH_MAX_EVENTS: '123' },
    machine(320 * 2 ** 20),
  );
  assert.deepEqual(
    [explicit.duckdbMemoryLimit, explicit.maxPendingEvents, explicit.flagThreads, explicit.personCacheSize, explicit.flushMaxEvents],
    ['1GB', 500_000, 3, 7, 123],
  );
});

test('too little memory is a configuration error that says how much is needed and where the limit came from', () => {
  assert.throws(() => loadConfig({}, machine(256 * 2 ** 20)), (error: Error) => error instanceof ConfigError && /at least 320 MB.*256 MB \(cgroup/.test(error.message));
  assert.throws(() => loadConfig({ SIGHTLINE_MEMORY_LIMIT_MB: '100' }, machine()), /raise SIGHTLINE_MEMORY_LIMIT_MB/);
  assert.throws(() => loadConfig({ SIGHTLINE_MEMORY_LIMIT_MB: 'lots' }, machine()), ConfigError);
});
