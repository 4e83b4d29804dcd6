/** Which partition an event goes to: all events of one person (project + distinct_id) share one, so one consumer handles them in order. */
import { mergedDistinctIdOf } from '../plan/persons.js';
import type { PendingEvent } from '../plan/plan.js';

/** FNV-1a over the text: stable across processes and versions (the partition of a person must never move). */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

export function partitionOf(event: PendingEvent, partitions: number): number {
  return partitionOfDistinctId(event.projectId, event.event.distinctId, partitions);
}

function partitionOfDistinctId(projectId: number, distinctId: string, partitions: number): number {
  return fnv1a(`${projectId}:${distinctId}`) % partitions;
}

/**
 * The other partitions a group's merges reach: an $identify's anonymous id (or an alias) may hash
 * to a partition that another node consumes, whose earlier batches must be processed first.
 */
export function partitionsMergedWith(group: PendingEvent[], own: number, partitions: number): number[] {
  const reached = new Set<number>();
  for (const { projectId, event } of group) {
    const other = mergedDistinctIdOf(event);
    if (other === null) continue;
    const partition = partitionOfDistinctId(projectId, other, partitions);
    if (partition !== own) reached.add(partition);
  }
  return [...reached];
}

/** The batch's events by partition, each group in the batch's order. */
export function splitByPartition(events: PendingEvent[], partitions: number): Map<number, PendingEvent[]> {
  const groups = new Map<number, PendingEvent[]>();
  for (const event of events) {
    const p = partitionOf(event, partitions);
    const group = groups.get(p);
    if (group) group.push(event);
    else groups.set(p, [event]);
  }
  return groups;
}
