/** Every query kind the query API answers, by its `kind`. Add a kind here, nowhere else. */
import type { QueryKind } from './types.js';

const KINDS: QueryKind<any>[] = [];

export const queryKinds: ReadonlyMap<string, QueryKind<unknown>> = new Map(KINDS.map((k) => [k.kind, k]));
