/**
 * A data folder that cannot be used stops start-up with one line saying where, why and what
 * to do, and a non-zero exit: not a stack trace.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { newTempDir } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function start(dataDir: string): { status: number | null; stderr: string; stdout: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/main.ts'), 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', SIGHTLINE_HOST: '127.0.0.1', SIGHTLINE_PORT: '0', SIGHTLINE_DATA_DIR: dataDir },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stderr: result.stderr, stdout: result.stdout };
}

describe('an unusable data folder', () => {
  // Tests run as root, which file modes do not stop: these folders fail for root too.
  const parentIsAFile = () => {
    const file = path.join(newTempDir(), 'not-a-folder');
    fs.writeFileSync(file, '');
    return { dataDir: path.join(file, 'data'), cause: /ENOTDIR/ };
  };
  const storeFileIsAFolder = () => {
    const dataDir = newTempDir();
    fs.mkdirSync(path.join(dataDir, 'meta.sqlite'));
    return { dataDir, cause: /SQLITE_CANTOPEN/ };
  };

  for (const [name, make] of [['under a file', parentIsAFile], ['whose store file is a folder', storeFileIsAFolder]] as const) {
    it(`${name}: one line with path, cause and fix, exit 1`, () => {
      const { dataDir, cause } = make();
      const { status, stderr, stdout } = start(dataDir);
      assert.equal(status, 1, `exit status (stderr: ${stderr})`);
      const lines = stderr.trim().split('\n');
      assert.equal(lines.length, 1, `one line, got:\n${stderr}`);
      assert.ok(lines[0].includes(dataDir), lines[0]);
      assert.match(lines[0], cause);
      assert.match(lines[0], /SIGHTLINE_DATA_DIR/);
      assert.doesNotMatch(stdout + stderr, /\n\s+at /, 'no stack trace');
    });
  }
});
