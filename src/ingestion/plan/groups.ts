/**
 * Step 3, groups. Group types (indexes 0–4 per project, allocated on first sight) and group rows:
 * $groupidentify upserts the group; $groups on other events only fills $group_N.
 */
import { isPlainObject, type JsonObject } from '../../kernel/json.js';
import { groupKeyOf, type IngestChanges, type IngestSnapshot, type StoredEvent } from '../../store/types.js';
import type { IncomingEvent } from '../types.js';

export const MAX_GROUP_TYPES = 5;

export class GroupWorkingSet {
  private readonly newTypes: IngestChanges['newGroupTypes'] = [];
  private readonly dirtyGroups = new Map<string, IngestChanges['upsertGroups'][number]>();

  constructor(private readonly snapshot: IngestSnapshot) {}

  /** Index of a group type, allocating the next free one; null once a project has five. */
  indexOf(projectId: number, groupType: string): number | null {
    let types = this.snapshot.groupTypes.get(projectId);
    if (!types) {
      types = new Map();
      this.snapshot.groupTypes.set(projectId, types);
    }
    const known = types.get(groupType);
    if (known !== undefined) return known;
    if (types.size >= MAX_GROUP_TYPES) return null;
    const index = types.size;
    types.set(groupType, index);
    this.newTypes.push({ project_id: projectId, group_type: groupType, group_type_index: index });
    return index;
  }

  /** Index of a group type the project already has, else null (allocates nothing). */
  knownIndexOf(projectId: number, groupType: string): number | null {
    return this.snapshot.groupTypes.get(projectId)?.get(groupType) ?? null;
  }

  identify(projectId: number, index: number, key: string, set: JsonObject, timestamp: Date): void {
    let groups = this.snapshot.groups.get(projectId);
    if (!groups) {
      groups = new Map();
      this.snapshot.groups.set(projectId, groups);
    }
    const composite = groupKeyOf(index, key);
    const current = groups.get(composite) ?? { properties: {}, created_at: timestamp.toISOString() };
    current.properties = { ...current.properties, ...set };
    groups.set(composite, current);
    this.dirtyGroups.set(`${projectId}\u0000${composite}`, {
      project_id: projectId,
      group_type_index: index,
      group_key: key,
      properties: current.properties,
      created_at: current.created_at,
    });
  }

  changes(): Pick<IngestChanges, 'newGroupTypes' | 'upsertGroups'> {
    return { newGroupTypes: this.newTypes, upsertGroups: [...this.dirtyGroups.values()] };
  }
}

/** What the groups step found in one event. */
export interface EventGroups {
  /** `$group_0` … `$group_4` columns, '' when absent. */
  columns: StoredEvent['groups'];
  /** The group type index a $groupidentify event identified, else null (for its definitions). */
  identifiedIndex: number | null;
}

const asKey = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;

/** The group a `$groupidentify` event names, as "<type>\u0000<key>", for the store to load. */
export function identifiedGroupOf(event: IncomingEvent): string | null {
  const type = asKey(event.properties.$group_type);
  const key = asKey(event.properties.$group_key);
  return event.event === '$groupidentify' && type !== null && key !== null ? `${type}\u0000${key}` : null;
}

/**
 * Applies one event to the groups: identifies the group of a $groupidentify, and copies the keys
 * of `$groups` into `$group_N` properties and columns (person-processing events only).
 */
export function applyGroups(groups: GroupWorkingSet, projectId: number, event: IncomingEvent, processPerson: boolean): EventGroups {
  const properties = event.properties;
  const columns: StoredEvent['groups'] = ['', '', '', '', ''];
  let identifiedIndex: number | null = null;
  if (event.event === '$groupidentify') {
    const type = asKey(properties.$group_type);
    const key = asKey(properties.$group_key);
    if (type !== null && key !== null) {
      identifiedIndex = groups.indexOf(projectId, type);
      const set = isPlainObject(properties.$group_set) ? properties.$group_set : {};
      if (identifiedIndex !== null) groups.identify(projectId, identifiedIndex, key, set, event.timestamp);
    }
  }
  fillGroupColumns(properties, columns, processPerson, (type) => groups.indexOf(projectId, type));
  return { columns, identifiedIndex };
}

/**
 * The groups step of an event written again after a redelivery (redelivered.ts): its `$group_N`
 * properties and columns from the group types the project has, without identifying or
 * allocating anything (the first delivery did).
 */
export function groupColumnsOf(groups: GroupWorkingSet, projectId: number, event: IncomingEvent, processPerson: boolean): StoredEvent['groups'] {
  const columns: StoredEvent['groups'] = ['', '', '', '', ''];
  fillGroupColumns(event.properties, columns, processPerson, (type) => groups.knownIndexOf(projectId, type));
  return columns;
}

/** Copies the keys of `$groups` into `$group_N` properties and columns (person-processing events only). */
function fillGroupColumns(properties: JsonObject, columns: StoredEvent['groups'], processPerson: boolean, indexOf: (groupType: string) => number | null): void {
  if (!processPerson || !isPlainObject(properties.$groups)) return;
  for (const [type, rawKey] of Object.entries(properties.$groups)) {
    const key = asKey(rawKey);
    if (key === null) continue;
    const index = indexOf(type);
    if (index === null) continue;
    properties[`$group_${index}`] = key;
    columns[index] = key;
  }
}
