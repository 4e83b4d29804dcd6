/**
 * Query nodes name actions by id — an ActionsNode (`id`), a retention entity `{type: "actions",
 * id}`, an EventsQuery's `actionId`. The kinds parse and compile synchronously, so the query
 * service resolves every such reference first and puts the action (name and steps) on the node. An unknown or deleted action is a 400 naming its `id`. The resolved
 * action is part of the node, so a result cached before the action changed is not served after.
 */
import { validationError } from '../../kernel/errors.js';
import { RESOLVED_ACTION, isRecord, type ResolvedAction } from '../series/node.js';

/** A live action of the project by id, or null. */
export type ActionLookup = (projectId: number, id: number) => Promise<ResolvedAction | null>;

/** Nodes nest (an actors query holds its insight's query); deeper than this is not a query. */
const MAX_DEPTH = 12;

export async function resolveActions(node: unknown, projectId: number, lookup: ActionLookup | null, path: string[] = [], depth = 0): Promise<unknown> {
  if (depth > MAX_DEPTH) return node;
  if (Array.isArray(node)) return Promise.all(node.map((item, i) => resolveActions(item, projectId, lookup, [...path, String(i)], depth + 1)));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = value !== null && typeof value === 'object' ? await resolveActions(value, projectId, lookup, [...path, key], depth + 1) : value;
  }
  const field = node.kind === 'ActionsNode' || node.type === 'actions' ? 'id' : node.kind === 'EventsQuery' && node.actionId != null ? 'actionId' : null;
  if (field === null) return out;
  const raw = node[field];
  const id = typeof raw === 'string' && /^\d{1,15}$/.test(raw) ? Number(raw) : raw;
  // A malformed id is the kind's 400 to give, with the rest of the node's checks.
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) return out;
  const attr = [...path, field].join('.');
  if (!lookup) throw validationError('Actions are not available with this metadata store.', attr);
  const action = await lookup(projectId, id);
  if (!action) throw validationError(`Action ${id} does not exist.`, attr, 'invalid_choice');
  out[RESOLVED_ACTION] = { id: action.id, name: action.name, steps: action.steps };
  return out;
}
