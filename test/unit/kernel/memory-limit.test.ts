import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { cgroupMemoryLimit } from '../../../src/kernel/memory-limit.js';

const roots: string[] = [];
after(() => roots.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A fake /proc/self/cgroup and /sys/fs/cgroup tree: files given by path relative to the root. */
function fakeSystem(membership: string, files: Record<string, string>) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-cgroup-'));
  roots.push(root);
  const procCgroup = path.join(root, 'proc-self-cgroup');
  fs.writeFileSync(procCgroup, membership);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, 'sys', file)), { recursive: true });
    fs.writeFileSync(path.join(root, 'sys', file), text);
  }
  return { procCgroup, root: path.join(root, 'sys') };
}

describe('cgroupMemoryLimit', () => {
  test('cgroup v2: memory.max of the process group', () => {
    const paths = fakeSystem('0::/app.slice/sightline.service\n', { 'app.slice/sightline.service/memory.max': '536870912\n', 'memory.max': 'max\n' });
    assert.deepEqual(cgroupMemoryLimit(paths), { bytes: 536_870_912, from: path.join(paths.root, 'app.slice/sightline.service/memory.max') });
  });

  test('cgroup v2: a smaller limit on an ancestor wins; "max" everywhere is no limit', () => {
    const limited = fakeSystem('0::/a/b\n', { 'a/b/memory.max': 'max\n', 'a/memory.max': '268435456\n' });
    assert.equal(cgroupMemoryLimit(limited)?.bytes, 268_435_456);
    const unlimited = fakeSystem('0::/a/b\n', { 'a/b/memory.max': 'max\n', 'a/memory.max': 'max\n' });
    assert.equal(cgroupMemoryLimit(unlimited), null);
  });

  test('cgroup v2 inside a container namespace (group "/")', () => {
    const paths = fakeSystem('0::/\n', { 'memory.max': '1073741824\n' });
    assert.equal(cgroupMemoryLimit(paths)?.bytes, 1_073_741_824);
  });

  test('cgroup v1 fallback: memory.limit_in_bytes, the near-2^63 figure meaning none', () => {
    const membership = '5:cpu,cpuacct:/\n4:memory:/process_api/abc\n0::/\n';
    const limited = fakeSystem(membership, { 'memory/process_api/abc/memory.limit_in_bytes': '536870912\n', 'memory/memory.limit_in_bytes': '9223372036854771712\n' });
    assert.equal(cgroupMemoryLimit(limited)?.bytes, 536_870_912);
    const unlimited = fakeSystem(membership, { 'memory/process_api/abc/memory.limit_in_bytes': '9223372036854771712\n' });
    assert.equal(cgroupMemoryLimit(unlimited), null);
  });

  test('no cgroup files at all', () => {
    assert.equal(cgroupMemoryLimit({ procCgroup: '/nonexistent/cgroup', root: '/nonexistent' }), null);
  });
});
