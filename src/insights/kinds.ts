/** Every query kind the query API answers, by its `kind`. Add a kind here, nowhere else. */
import { eventsQuery } from './events-query/kind.js';
import { hogqlQuery } from './hogql/kind.js';
import type { QueryKind } from './types.js';
import { trendsKind } from './trends/kind.js';
import { stickinessKind } from './stickiness/kind.js';
import { lifecycleKind } from './lifecycle/kind.js';

const KINDS: QueryKind<any>[] = [hogqlQuery, eventsQuery, trendsKind, stickinessKind, lifecycleKind];

export const queryKinds: ReadonlyMap<string, QueryKind<unknown>> = new Map(KINDS.map((k) => [k.kind, k]));
