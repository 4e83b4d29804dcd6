/**
 * Property and event definitions as the management API changes them. Ingestion keeps the
 * definitions it has written in a cache so that it writes each one once; a rename or a deletion
 * empties that cache, or ingestion would never write the definition again.
 */
import { notFound, validationError } from '../kernel/errors.js';
import type {
  DefinitionStore,
  EventDefinition,
  EventDefinitionQuery,
  PageOf,
  PropertyDefinition,
  PropertyDefinitionPatch,
  PropertyDefinitionQuery,
} from '../store/types.js';

export class Definitions {
  constructor(
    private readonly store: DefinitionStore,
    /** Empties ingestion's cache of written definitions. */
    private readonly forgetWritten: () => void,
  ) {}

  listProperties(query: PropertyDefinitionQuery): Promise<PageOf<PropertyDefinition>> {
    return this.store.listProperties(query);
  }

  seenTogether(projectId: number, eventNames: string[], property: string): Promise<Record<string, boolean>> {
    return this.store.seenTogether(projectId, eventNames, property);
  }

  async getProperty(projectId: number, id: string): Promise<PropertyDefinition> {
    return found(await this.store.getProperty(projectId, id));
  }

  async updateProperty(projectId: number, id: string, patch: PropertyDefinitionPatch): Promise<PropertyDefinition> {
    const result = await this.store.updateProperty(projectId, id, patch);
    if (result === 'not_found') throw notFound();
    if (result === 'name_taken') throw validationError('A property definition with this name already exists.', 'name', 'unique');
    if (patch.name !== undefined) this.forgetWritten();
    return result;
  }

  /** Ingestion creates it again if the property is seen again. */
  async deleteProperty(projectId: number, id: string): Promise<void> {
    if (!(await this.store.deleteProperty(projectId, id))) throw notFound();
    this.forgetWritten();
  }

  listEvents(query: EventDefinitionQuery): Promise<PageOf<EventDefinition>> {
    return this.store.listEvents(query);
  }

  async getEvent(projectId: number, id: string): Promise<EventDefinition> {
    return found(await this.store.getEvent(projectId, id));
  }

  async updateEvent(projectId: number, id: string, patch: { description?: string | null; tags?: string[] }): Promise<EventDefinition> {
    return found(await this.store.updateEvent(projectId, id, patch));
  }

  async deleteEvent(projectId: number, id: string): Promise<void> {
    if (!(await this.store.deleteEvent(projectId, id))) throw notFound();
    this.forgetWritten();
  }
}

function found<T>(value: T | null): T {
  if (value === null) throw notFound();
  return value;
}
