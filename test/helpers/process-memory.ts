/**
 * Memory of a server's process tree, read from /proc. The server runs its event store in a child
 * process (store/duckdb/threaded.ts), so its footprint is the tree's: RSS summed over the server
 * and its descendants. Pages both map (node's binary) count once per process here, so the sum is
 * an upper bound on what the tree holds; the peak is each process's VmHWM summed, an upper bound
 * too, as the peaks need not coincide.
 */
import fs from 'node:fs';

/** The fields of /proc/<pid>/stat after the command name (field 3 on), or null once it has gone. */
export function statFields(pid: number): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function parentOf(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : null;
}

/** `root` and its live descendants. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const parent = parentOf(Number(name));
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), Number(name)]);
  }
  const tree: number[] = [];
  const visit = (pid: number) => {
    tree.push(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return tree;
}

/** A /proc/<pid>/status field in MB; 0 for a process that has gone. */
function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Resident and peak resident memory of `pid`'s tree, in MB. */
export function memoryOf(pid: number): { rssMb: number; hwmMb: number } {
  const tree = processTree(pid);
  const sum = (field: 'VmRSS' | 'VmHWM') => tree.reduce((total, member) => total + statusMb(member, field), 0);
  return { rssMb: sum('VmRSS'), hwmMb: sum('VmHWM') };
}
