/**
 * An in-memory DefinitionStore for unit tests of the definitions service. Ingestion writes
 * definitions through another interface; tests seed them with `addProperty` / `addEvent`.
 */
import { randomUUID } from 'node:crypto';
import type {
  DefinitionStore,
  DefinitionUpdate,
  EventDefinition,
  EventDefinitionQuery,
  PropertyDefinition,
  PropertyDefinitionPatch,
  PropertyDefinitionQuery,
} from '../../src/store/types.js';

export class FakeDefinitionStore implements DefinitionStore {
  readonly properties: PropertyDefinition[] = [];
  readonly events: EventDefinition[] = [];

  addProperty(projectId: number, name: string, extra: Partial<PropertyDefinition> = {}): PropertyDefinition {
    const definition: PropertyDefinition = { id: randomUUID(), project_id: projectId, name, type: 1, group_type_index: null, property_type: null, is_numerical: false, tags: [], is_seen_on_filtered_events: null, ...extra };
    this.properties.push(definition);
    return definition;
  }
  addEvent(projectId: number, name: string): EventDefinition {
    const at = new Date().toISOString();
    const definition: EventDefinition = { id: randomUUID(), project_id: projectId, name, description: null, tags: [], created_at: at, last_seen_at: at };
    this.events.push(definition);
    return definition;
  }

  async listProperties(query: PropertyDefinitionQuery) {
    const matching = this.properties.filter((d) => d.project_id === query.projectId && d.type === query.type);
    return { count: matching.length, results: matching.slice(query.offset, query.offset + query.limit) };
  }
  async getProperty(projectId: number, id: string) {
    return this.properties.find((d) => d.project_id === projectId && d.id === id) ?? null;
  }
  async updateProperty(projectId: number, id: string, patch: PropertyDefinitionPatch): Promise<DefinitionUpdate<PropertyDefinition>> {
    const definition = await this.getProperty(projectId, id);
    if (!definition) return 'not_found';
    if (patch.name !== undefined && this.properties.some((d) => d !== definition && d.project_id === projectId && d.type === definition.type && d.name === patch.name)) return 'name_taken';
    Object.assign(definition, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
    return definition;
  }
  async deleteProperty(projectId: number, id: string) {
    const index = this.properties.findIndex((d) => d.project_id === projectId && d.id === id);
    if (index < 0) return false;
    this.properties.splice(index, 1);
    return true;
  }
  async seenTogether(_projectId: number, eventNames: string[]) {
    return Object.fromEntries(eventNames.map((name) => [name, false]));
  }
  async propertyTypes() {
    return new Map();
  }
  async listEvents(query: EventDefinitionQuery) {
    const matching = this.events.filter((d) => d.project_id === query.projectId);
    return { count: matching.length, results: matching.slice(query.offset, query.offset + query.limit) };
  }
  async getEvent(projectId: number, id: string) {
    return this.events.find((d) => d.project_id === projectId && d.id === id) ?? null;
  }
  async updateEvent(projectId: number, id: string, patch: { description?: string | null; tags?: string[] }) {
    const definition = await this.getEvent(projectId, id);
    if (!definition) return null;
    Object.assign(definition, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
    return definition;
  }
  async deleteEvent(projectId: number, id: string) {
    const index = this.events.findIndex((d) => d.project_id === projectId && d.id === id);
    if (index < 0) return false;
    this.events.splice(index, 1);
    return true;
  }
}
