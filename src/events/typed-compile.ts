/**
 * The compiler asks for property types synchronously, one key at a time; the definitions live
 * in the metadata store. So compile twice: a dry run records which keys are read, one lookup
 * fetches just their declared types, and the real run uses them.
 */
import { HogQLError, ParamSink, type CompileContext, type PropertyKind, type PropertyValueType } from '../hogql/index.js';

export type TypeLookup = (kind: PropertyKind, names: string[]) => Promise<Map<string, PropertyValueType>>;

export async function compileTyped<T>(now: Date, lookup: TypeLookup, build: (ctx: CompileContext) => T): Promise<T> {
  const wanted: Record<PropertyKind, Set<string>> = { event: new Set(), person: new Set() };
  try {
    build({ params: new ParamSink(), now, propertyType: (kind, key) => (wanted[kind].add(key), null) });
  } catch (error) {
    // Some errors depend on types; the typed run below reports whatever is really wrong.
    if (!(error instanceof HogQLError)) throw error;
  }
  const [event, person] = await Promise.all([lookup('event', [...wanted.event]), lookup('person', [...wanted.person])]);
  const types: Record<PropertyKind, Map<string, PropertyValueType>> = { event, person };
  return build({ params: new ParamSink(), now, propertyType: (kind, key) => types[kind].get(key) ?? null });
}
