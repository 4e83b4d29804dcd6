import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config.js';

test('defaults when nothing is set', () => {
  const config = loadConfig({});
  assert.equal(config.host, '0.0.0.0');
  assert.equal(config.port, 8000);
  assert.equal(config.duckdbMemoryLimit, '256MB');
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
