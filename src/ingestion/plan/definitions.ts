/**
 * Step 5, definitions: property and event definitions kept during ingestion, as PostHog's
 * `rust/property-defs-rs` keeps them (github.com/PostHog/posthog). A process-wide cache
 * remembers what is already stored so that a steady stream of known properties costs two set
 * lookups per property and no write.
 */
import { isPlainObject, type JsonObject } from '../../kernel/json.js';
import type { IngestChanges, PropertyDefinitionWrite } from '../../store/types.js';
import { inferPropertyType } from './infer-type.js';
import { getOrCreate } from '../../util/get-or-create.js';

const MAX_NAME_BYTES = 200;
const NOT_EVENT_PROPERTIES = new Set(['$set', '$set_once', '$unset', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4', '$groups']);
const HOUR_MS = 3_600_000;

type DefinitionKind = 1 | 2 | 3;

/** UTF-8 length over 200 bytes; the byte count is only computed when it could matter. */
const tooLong = (name: string) => name.length > MAX_NAME_BYTES / 3 && Buffer.byteLength(name) > MAX_NAME_BYTES;

export class DefinitionCache {
  /** "<project>/<kind>/<group index>" → names stored with a known type. */
  readonly typed = new Map<string, Set<string>>();
  /** Same keys → names stored without a type yet (only a non-null value is written again). */
  readonly untyped = new Map<string, Set<string>>();
  /** "<project>/<event>" → property names already paired with that event. */
  readonly pairs = new Map<string, Set<string>>();
  /** "<project>/<event>" → hour of the last `last_seen_at` written. */
  readonly eventHours = new Map<string, number>();

  clear(): void {
    this.typed.clear();
    this.untyped.clear();
    this.pairs.clear();
    this.eventHours.clear();
  }
}

export class DefinitionCollector {
  private readonly properties = new Map<string, PropertyDefinitionWrite>();
  private readonly pairs = new Map<string, { project_id: number; event: string; property: string }>();
  private readonly events = new Map<string, { project_id: number; name: string; last_seen_at: string }>();
  private readonly hour: number;

  constructor(private readonly cache: DefinitionCache, private readonly now: Date) {
    this.hour = Math.floor(now.getTime() / HOUR_MS);
  }

  /** Records the definitions one stored event implies. */
  observe(projectId: number, event: string, properties: JsonObject, groupIndex: number | null): void {
    if (event === '$$plugin_metrics' || tooLong(event)) return;
    const eventKey = `${projectId}/${event}`;
    if (this.cache.eventHours.get(eventKey) !== this.hour) {
      this.events.set(eventKey, { project_id: projectId, name: event, last_seen_at: new Date(this.hour * HOUR_MS).toISOString() });
    }
    const pairs = getOrCreate(this.cache.pairs, eventKey, () => new Set<string>());
    if (event === '$groupidentify') {
      const set = properties.$group_set;
      if (groupIndex !== null && isPlainObject(set)) this.observeBag(projectId, event, pairs, set, 3, groupIndex, null);
      return;
    }
    this.observeBag(projectId, event, pairs, properties, 1, null, NOT_EVENT_PROPERTIES);
    if (isPlainObject(properties.$set)) this.observeBag(projectId, event, pairs, properties.$set, 2, null, null);
    if (isPlainObject(properties.$set_once)) this.observeBag(projectId, event, pairs, properties.$set_once, 2, null, null);
  }

  private observeBag(
    projectId: number,
    event: string,
    pairs: Set<string>,
    bag: JsonObject,
    kind: DefinitionKind,
    groupIndex: number | null,
    skip: Set<string> | null,
  ): void {
    const scope = `${projectId}/${kind}/${groupIndex ?? -1}`;
    const typed = getOrCreate(this.cache.typed, scope, () => new Set<string>());
    const untyped = getOrCreate(this.cache.untyped, scope, () => new Set<string>());
    for (const name in bag) {
      // Steady state: a known pair with a known type costs these two lookups and nothing else.
      const knownPair = pairs.has(name);
      const knownType = typed.has(name);
      if ((knownPair && knownType) || skip?.has(name) || tooLong(name)) continue;
      if (!knownPair) this.pairs.set(`${projectId}\u0000${event}\u0000${name}`, { project_id: projectId, event, property: name });
      if (knownType) continue;
      const value = bag[name];
      // A null says nothing about the type: a definition already stored or collected needs no new write.
      const noType = value === null || value === undefined;
      if (noType && untyped.has(name)) continue;
      const key = `${scope}/${name}`;
      const pending = this.properties.get(key);
      if (pending?.property_type || (pending && noType)) continue;
      this.properties.set(key, { project_id: projectId, name, type: kind, group_type_index: groupIndex, property_type: inferPropertyType(name, value, this.now) });
    }
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
    for (const def of this.properties.values()) {
      const scope = `${def.project_id}/${def.type}/${def.group_type_index ?? -1}`;
      getOrCreate(def.property_type ? this.cache.typed : this.cache.untyped, scope, () => new Set()).add(def.name);
    }
    for (const pair of this.pairs.values()) getOrCreate(this.cache.pairs, `${pair.project_id}/${pair.event}`, () => new Set()).add(pair.property);
    for (const [key] of this.events) this.cache.eventHours.set(key, this.hour);
  }
}

