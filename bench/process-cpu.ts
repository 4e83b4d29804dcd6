/**
 * CPU seconds taken by process trees, read from /proc: a process's own time plus that of its
 * live descendants and of the children it already reaped (PostgreSQL's backends come and go).
 * Benchmarks snapshot before and after a run and report the difference per part.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { statFields } from '../test/helpers/process-memory.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

interface Stat {
  ppid: number;
  own: number;
  reaped: number;
}

function readStat(pid: number): Stat | null {
  const fields = statFields(pid);
  if (!fields) return null;
  const [ppid, utime, stime, cutime, cstime] = [fields[1], fields[11], fields[12], fields[13], fields[14]].map(Number);
  return { ppid, own: (utime + stime) / TICKS_PER_SECOND, reaped: (cutime + cstime) / TICKS_PER_SECOND };
}

function allStats(): Map<number, Stat> {
  const stats = new Map<number, Stat>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat) stats.set(Number(name), stat);
  }
  return stats;
}

/** CPU seconds so far of each named part, a part being the trees rooted at its pids. */
export function cpuSeconds(parts: Record<string, number[]>): Record<string, number> {
  const stats = allStats();
  const children = new Map<number, number[]>();
  for (const [pid, stat] of stats) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  const tree = (root: number): number => {
    const stat = stats.get(root);
    if (!stat) return 0;
    return stat.own + stat.reaped + (children.get(root) ?? []).reduce((sum, child) => sum + tree(child), 0);
  };
  return Object.fromEntries(Object.entries(parts).map(([part, pids]) => [part, pids.reduce((sum, pid) => sum + tree(pid), 0)]));
}

/** The difference of two cpuSeconds snapshots, part by part. */
export function cpuSpent(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((part) => [part, after[part] - (before[part] ?? 0)]));
}
