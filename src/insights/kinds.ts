/** Every query kind the query API answers, by its `kind`. Add a kind here, nowhere else. */
import type { QueryKind } from './types.js';
import { funnelsQuery } from './funnels/kind.js';
import { retentionQuery } from './retention/kind.js';
import { pathsQuery } from './paths/kind.js';

const KINDS: QueryKind<any>[] = [
  funnelsQuery,
  retentionQuery,
  pathsQuery,
];

export const queryKinds: ReadonlyMap<string, QueryKind<unknown>> = new Map(KINDS.map((k) => [k.kind, k]));
