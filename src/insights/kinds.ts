/** Every query kind the query API answers, by its `kind`. Add a kind here, nowhere else. */
import { actorsQuery } from './actors/kind.js';
import { eventsQuery } from './events-query/kind.js';
import { hogqlQuery } from './hogql/kind.js';
import type { QueryKind } from './types.js';
import { trendsKind } from './trends/kind.js';
import { stickinessKind } from './stickiness/kind.js';
import { lifecycleKind } from './lifecycle/kind.js';
import { funnelsQuery } from './funnels/kind.js';
import { retentionQuery } from './retention/kind.js';
import { pathsQuery } from './paths/kind.js';

const KINDS: QueryKind<any>[] = [hogqlQuery, eventsQuery, trendsKind, stickinessKind, lifecycleKind, funnelsQuery, retentionQuery, pathsQuery, actorsQuery(() => queryKinds)];

export const queryKinds: ReadonlyMap<string, QueryKind<unknown>> = new Map(KINDS.map((k) => [k.kind, k]));
