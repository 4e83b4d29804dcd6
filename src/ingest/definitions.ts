/**
 * Property and event definitions kept during ingestion (semantics §3.1). A process-wide cache
 * remembers what is already stored so that a steady stream of known properties costs nothing.
 */
import type { IngestChanges, PropertyDefinitionWrite } from '../store/types.js';
import { inferPropertyType } from './infer-type.js';
import type { JsonObject } from './types.js';

const MAX_NAME_LENGTH = 200;
const NOT_EVENT_PROPERTIES = new Set(['$set', '$set_once', '$unset', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4', '$groups']);
const HOUR_MS = 3_600_000;

export class DefinitionCache {
  /** Definitions stored with a known type (untyped ones are retried until a type is seen). */
  readonly typed = new Set<string>();
  readonly pairs = new Set<string>();
  /** Event definition → hour of the last `last_seen_at` written. */
  readonly eventHours = new Map<string, number>();

  clear(): void {
    this.typed.clear();
    this.pairs.clear();
    this.eventHours.clear();
  }
}

export class DefinitionCollector {
  private readonly properties = new Map<string, PropertyDefinitionWrite>();
  private readonly pairs = new Map<string, { project_id: number; event: string; property: string }>();
  private readonly events = new Map<string, { project_id: number; name: string; last_seen_at: string }>();
  private readonly written: string[] = [];

  constructor(private readonly cache: DefinitionCache, private readonly now: Date) {}

  /** Records the definitions one stored event implies. */
  observe(projectId: number, event: string, properties: JsonObject, groupIndex: number | null): void {
    if (event === '$$plugin_metrics' || Buffer.byteLength(event) > MAX_NAME_LENGTH) return;
    this.observeEvent(projectId, event);
    if (event === '$groupidentify') {
      const set = properties.$group_set;
      if (groupIndex === null || !isObject(set)) return;
      for (const [key, value] of Object.entries(set)) this.observeProperty(projectId, event, key, value, 3, groupIndex);
      return;
    }
    for (const [key, value] of Object.entries(properties)) {
      if (!NOT_EVENT_PROPERTIES.has(key)) this.observeProperty(projectId, event, key, value, 1, null);
    }
    for (const bag of [properties.$set, properties.$set_once]) {
      if (!isObject(bag)) continue;
      for (const [key, value] of Object.entries(bag)) this.observeProperty(projectId, event, key, value, 2, null);
    }
  }

  private observeEvent(projectId: number, name: string): void {
    const cacheKey = `${projectId}\u0000${name}`;
    const hour = Math.floor(this.now.getTime() / HOUR_MS);
    if (this.cache.eventHours.get(cacheKey) === hour) return;
    this.events.set(cacheKey, { project_id: projectId, name, last_seen_at: new Date(hour * HOUR_MS).toISOString() });
  }

  private observeProperty(projectId: number, event: string, name: string, value: unknown, type: 1 | 2 | 3, groupIndex: number | null): void {
    if (Buffer.byteLength(name) > MAX_NAME_LENGTH) return;
    const pairKey = `${projectId}\u0000${event}\u0000${name}`;
    if (!this.cache.pairs.has(pairKey)) this.pairs.set(pairKey, { project_id: projectId, event, property: name });
    const defKey = `${projectId}\u0000${type}\u0000${groupIndex ?? -1}\u0000${name}`;
    if (this.cache.typed.has(defKey)) return;
    const existing = this.properties.get(defKey);
    if (existing?.property_type) return;
    this.properties.set(defKey, {
      project_id: projectId,
      name,
      type,
      group_type_index: groupIndex,
      property_type: inferPropertyType(name, value, this.now),
    });
  }

  changes(): Pick<IngestChanges, 'propertyDefinitions' | 'eventDefinitions' | 'eventProperties'> {
    return {
      propertyDefinitions: [...this.properties.values()],
      eventDefinitions: [...this.events.values()],
      eventProperties: [...this.pairs.values()],
    };
  }

  /** Call once the flush committed: from now on these need no write. */
  commit(): void {
    for (const [key, def] of this.properties) if (def.property_type) this.cache.typed.add(key);
    for (const key of this.pairs.keys()) this.cache.pairs.add(key);
    for (const [key, e] of this.events) this.cache.eventHours.set(key, Math.floor(new Date(e.last_seen_at).getTime() / HOUR_MS));
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
