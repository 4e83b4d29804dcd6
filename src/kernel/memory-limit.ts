/**
 * The memory limit the process runs under, from its control group: cgroup v2's `memory.max`,
 * or cgroup v1's `memory.limit_in_bytes` where the memory controller is mounted the v1 way.
 * The group's ancestors count too (a container's limit is often set one level up), so the
 * smallest limit on the way to the root wins. No limit ("max", or v1's near-2^63 figure) gives
 * null, as does a system without cgroups.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface MemoryLimitSource {
  bytes: number;
  /** Where it was read, for the start-up log. */
  from: string;
}

/** v1 reports "no limit" as a page-aligned number near 2^63; anything past 2^60 is none. */
const UNLIMITED_FROM = 2 ** 60;

export interface CgroupPaths {
  /** `/proc/self/cgroup` */
  procCgroup: string;
  /** Where the hierarchies are mounted: `/sys/fs/cgroup` */
  root: string;
}

const SYSTEM: CgroupPaths = { procCgroup: '/proc/self/cgroup', root: '/sys/fs/cgroup' };

export function cgroupMemoryLimit(paths: CgroupPaths = SYSTEM): MemoryLimitSource | null {
  let membership: string;
  try {
    membership = fs.readFileSync(paths.procCgroup, 'utf8');
  } catch {
    return null;
  }
  const groups = membership
    .split('\n')
    .map((line) => /^(\d+):([^:]*):(.*)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ controllers: m[2].split(','), group: m[3] }));

  const v2 = groups.find((g) => g.controllers.length === 1 && g.controllers[0] === '');
  if (v2) {
    const found = smallestOnTheWayUp(paths.root, v2.group, 'memory.max');
    if (found) return found;
  }
  const v1 = groups.find((g) => g.controllers.includes('memory'));
  if (v1) {
    // Mounted as /sys/fs/cgroup/memory, or together with others (memory,cpu…) on some systems.
    for (const mount of ['memory', v1.controllers.join(',')]) {
      const found = smallestOnTheWayUp(path.join(paths.root, mount), v1.group, 'memory.limit_in_bytes');
      if (found) return found;
    }
  }
  return null;
}

/**
 * The smallest limit in `file` from the group's folder up to the hierarchy's root. Inside a
 * container with its own cgroup namespace the group is `/` and the root is the container's.
 */
function smallestOnTheWayUp(root: string, group: string, file: string): MemoryLimitSource | null {
  let best: MemoryLimitSource | null = null;
  let dir = path.join(root, group);
  for (;;) {
    const limit = readLimit(path.join(dir, file));
    if (limit !== null && (best === null || limit < best.bytes)) best = { bytes: limit, from: path.join(dir, file) };
    if (path.relative(root, dir) === '' || !dir.startsWith(root)) break;
    dir = path.dirname(dir);
  }
  return best;
}

function readLimit(file: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  if (text === 'max' || !/^\d+$/.test(text)) return null;
  const bytes = Number(text);
  return bytes >= UNLIMITED_FROM ? null : bytes;
}
