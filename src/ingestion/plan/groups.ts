/**
 * Group types (indexes 0–4 per project, allocated on first sight) and group rows
 * ($groupidentify upserts; $groups on other events only fills $group_N).
 */
import type { JsonObject } from '../../kernel/json.js';
import { groupKeyOf, type IngestChanges, type IngestSnapshot } from '../../store/types.js';

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
