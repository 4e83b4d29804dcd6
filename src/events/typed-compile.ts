/**
 * The compiler asks for property types synchronously, one key at a time; the definitions live
 * in the metadata store. So compile twice: a dry run records which keys are read, one lookup
 * fetches just their declared types, and the real run uses them.
 */
import { HogQLError, type CompileContext, type PropertyKind, type PropertyValueType } from '../hogql/index.js';

export type TypeLookup = (kind: PropertyKind, names: string[]) => Promise<Map<string, PropertyValueType>>;

export async function compileTyped<T>(base: Omit<CompileContext, 'propertyType'>, lookup: TypeLookup, build: (ctx: CompileContext) => T): Promise<T> {
  const wanted: Record<PropertyKind, Set<string>> = { event: new Set(), person: new Set(), group: new Set() };
  try {
    build({ ...base, propertyType: (kind, key) => (wanted[kind].add(key), null) });
  } catch (error) {
    // Some errors depend on types; the typed run below reports whatever is really wrong.
    if (!(error instanceof HogQLError)) throw error;
  }
  const [event, person, group] = await Promise.all([lookup('event', [...wanted.event]), lookup('person', [...wanted.person]), lookup('group', [...wanted.group])]);
  const types: Record<PropertyKind, Map<string, PropertyValueType>> = { event, person, group };
  return build({ ...base, propertyType: (kind, key) => types[kind].get(key) ?? null });
}
