/**
 * A memory cgroup for a benchmark's server (`npm run soak -- --memory 512M`), made the way this
 * machine allows, in this order:
 * 1. systemd-run --scope with MemoryMax (where systemd runs the machine);
 * 2. cgroup v2 directly: a child group of ours with memory.max (the memory controller must be
 *    enabled for it, which needs root and a group without processes of its own in the way);
 * 3. cgroup v1 directly: a child group of ours in the memory hierarchy with memory.limit_in_bytes.
 * Swap is limited to nothing where the files allow, so the limit is one of memory, not of memory
 * plus swap. The server moves itself in before node starts (`launcher`), so everything it
 * allocates counts. Without any of these the benchmark stops with the reasons.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface MemoryCgroup {
  /** How it was made, for the report. */
  how: string;
  /** Runs node inside it (see StartOptions.launcher). */
  launcher: string[];
  /** OOM kills in the group and its peak memory use (page cache included, as the limit counts it). */
  usage(pid: number): { oomKills: number; peakMb: number; nowMb: number };
  remove(): void;
}

const ROOT = '/sys/fs/cgroup';

/** "512M", "1G", "300m", or bytes. */
export function parseMemory(text: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([KMG]?)i?B?$/i.exec(text.trim());
  if (!match) throw new Error(`--memory must look like 512M or 1G, got "${text}"`);
  const unit = { '': 1, K: 2 ** 10, M: 2 ** 20, G: 2 ** 30 }[match[2].toUpperCase() as '' | 'K' | 'M' | 'G'];
  return Math.floor(Number(match[1]) * unit);
}

const read = (file: string) => fs.readFileSync(file, 'utf8').trim();
const tryRead = (file: string) => {
  try {
    return read(file);
  } catch {
    return null;
  }
};
const counter = (text: string | null, name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text ?? '')?.[1] ?? 0);

/** The server's group directory (v2 first), read from /proc/<pid>/cgroup, for systemd-made scopes. */
function groupOf(pid: number): { dir: string; version: 1 | 2 } | null {
  const lines = tryRead(`/proc/${pid}/cgroup`)?.split('\n') ?? [];
  const v2 = lines.find((l) => l.startsWith('0::'));
  if (v2 && fs.existsSync(path.join(ROOT, v2.slice(3), 'memory.max'))) return { dir: path.join(ROOT, v2.slice(3)), version: 2 };
  const v1 = lines.map((l) => /^\d+:([^:]*):(.*)$/.exec(l)).find((m) => m && m[1].split(',').includes('memory'));
  return v1 ? { dir: path.join(ROOT, 'memory', v1[2]), version: 1 } : null;
}

function usageOf(group: { dir: string; version: 1 | 2 } | null): { oomKills: number; peakMb: number; nowMb: number } {
  if (!group) return { oomKills: NaN, peakMb: NaN, nowMb: NaN };
  const mb = (text: string | null) => (text === null ? NaN : Number(text) / 2 ** 20);
  if (group.version === 2) {
    return {
      oomKills: counter(tryRead(path.join(group.dir, 'memory.events')), 'oom_kill'),
      peakMb: mb(tryRead(path.join(group.dir, 'memory.peak'))),
      nowMb: mb(tryRead(path.join(group.dir, 'memory.current'))),
    };
  }
  return {
    oomKills: counter(tryRead(path.join(group.dir, 'memory.oom_control')), 'oom_kill'),
    peakMb: mb(tryRead(path.join(group.dir, 'memory.max_usage_in_bytes'))),
    nowMb: mb(tryRead(path.join(group.dir, 'memory.usage_in_bytes'))),
  };
}

/** The shell step that moves the process into `dir` and then becomes node (same pid). */
const enter = (dir: string) => ['/bin/sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', dir];

function writeOrThrow(file: string, value: string): void {
  fs.writeFileSync(file, value);
}

function viaSystemd(bytes: number): MemoryCgroup | string {
  if (!fs.existsSync('/run/systemd/system')) return 'systemd-run: systemd is not running this machine (no /run/systemd/system)';
  try {
    execFileSync('systemd-run', ['--scope', '--quiet', '-p', `MemoryMax=${bytes}`, 'true'], { stdio: 'pipe' });
  } catch (error) {
    return `systemd-run: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`;
  }
  let group: ReturnType<typeof groupOf> = null;
  return {
    how: `systemd-run --scope -p MemoryMax=${bytes} -p MemorySwapMax=0`,
    launcher: ['systemd-run', '--scope', '--quiet', '-p', `MemoryMax=${bytes}`, '-p', 'MemorySwapMax=0', '--'],
    usage: (pid) => usageOf((group ??= groupOf(pid))),
    remove: () => undefined, // systemd removes a scope when its process ends
  };
}

function ownGroup(version: 1 | 2): string | null {
  const lines = tryRead('/proc/self/cgroup')?.split('\n') ?? [];
  if (version === 2) return lines.find((l) => l.startsWith('0::'))?.slice(3) ?? null;
  return lines.map((l) => /^\d+:([^:]*):(.*)$/.exec(l)).find((m) => m && m[1].split(',').includes('memory'))?.[2] ?? null;
}

function viaCgroupV2(bytes: number): MemoryCgroup | string {
  const own = ownGroup(2);
  if (!fs.existsSync(path.join(ROOT, 'cgroup.controllers')) || own === null) return 'cgroup v2: /sys/fs/cgroup is not a cgroup v2 hierarchy';
  const parent = path.join(ROOT, own);
  if (!(tryRead(path.join(ROOT, 'cgroup.controllers')) ?? '').split(' ').includes('memory')) return 'cgroup v2: the memory controller is not available';
  const dir = path.join(parent, `sightline-bench-${process.pid}`);
  try {
    if (!(tryRead(path.join(parent, 'cgroup.subtree_control')) ?? '').split(' ').includes('memory')) writeOrThrow(path.join(parent, 'cgroup.subtree_control'), '+memory');
    fs.mkdirSync(dir);
    writeOrThrow(path.join(dir, 'memory.max'), String(bytes));
    if (fs.existsSync(path.join(dir, 'memory.swap.max'))) writeOrThrow(path.join(dir, 'memory.swap.max'), '0');
  } catch (error) {
    fs.rmSync(dir, { recursive: false, force: true });
    return `cgroup v2: ${(error as Error).message}`;
  }
  return { how: `cgroup v2, ${dir}/memory.max = ${bytes}`, launcher: enter(dir), usage: () => usageOf({ dir, version: 2 }), remove: () => removeGroup(dir) };
}

function viaCgroupV1(bytes: number): MemoryCgroup | string {
  const own = ownGroup(1);
  const hierarchy = path.join(ROOT, 'memory');
  if (own === null || !fs.existsSync(path.join(hierarchy, 'memory.limit_in_bytes'))) return 'cgroup v1: no memory hierarchy at /sys/fs/cgroup/memory';
  const dir = path.join(hierarchy, own, `sightline-bench-${process.pid}`);
  try {
    fs.mkdirSync(dir);
    writeOrThrow(path.join(dir, 'memory.limit_in_bytes'), String(bytes));
    // memory+swap no larger than memory: no swap (the file exists only with swap accounting).
    if (fs.existsSync(path.join(dir, 'memory.memsw.limit_in_bytes'))) writeOrThrow(path.join(dir, 'memory.memsw.limit_in_bytes'), String(bytes));
  } catch (error) {
    removeGroup(dir);
    return `cgroup v1: ${(error as Error).message}`;
  }
  return { how: `cgroup v1, ${dir}/memory.limit_in_bytes = ${bytes}`, launcher: enter(dir), usage: () => usageOf({ dir, version: 1 }), remove: () => removeGroup(dir) };
}

/** A group can be removed once its processes have ended (rmdir, not a recursive delete: its files are the kernel's). */
function removeGroup(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // already gone, or a process still in it: left for the caller to see
  }
}

export function memoryCgroup(bytes: number): MemoryCgroup {
  const reasons: string[] = [];
  for (const make of [viaSystemd, viaCgroupV2, viaCgroupV1]) {
    const made = make(bytes);
    if (typeof made !== 'string') return made;
    reasons.push(made);
  }
  throw new Error(`no way to run the server in a memory cgroup here:\n  ${reasons.join('\n  ')}`);
}
