/**
 * Paths from an in-memory event list with plain loops (query-api.md §1.12, as docs/insights.md
 * states Sightline's rules): items, excluded items dropped, 30-minute sessions, repeats
 * collapsed, start/end points, step limit, then edges counted. An item can come from a
 * HogQL expression (given here as a function), be cleaned by regex rules (test-written patterns,
 * so JS RegExp is fine here) and grouped by wildcard patterns (matched with plain string search).
 */
import type { RefEvent } from './funnels.js';

export interface RefPaths {
  startPoint: string | null;
  endPoint: string | null;
  stepLimit: number;
  /** Items left out before sessions are made (pathsFilter.excludeEvents). */
  exclude?: string[];
  /** pathsHogQLExpression with includeEventTypes ["hogql"]: every event's raw item. */
  hogql?: (e: RefEvent) => string;
  /** localPathCleaningFilters, applied in order (alias `\1` = group 1). */
  cleaning?: Array<{ regex: string; alias: string }>;
  /** pathGroupings: an item containing a pattern (`*` = any text) becomes the pattern. */
  groupings?: string[];
  from: number;
  to: number;
}

export interface RefEdge {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}

const rawItemOf = (e: RefEvent) => {
  if (e.event === '$pageview') {
    const url = String(e.properties.$current_url ?? '');
    return url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
  }
  return e.event;
};

/** Whether `text` contains `pattern`'s pieces between its `*`s, in order. */
function containsWildcard(text: string, pattern: string): boolean {
  let at = 0;
  for (const piece of pattern.split('*')) {
    const found = text.indexOf(piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return true;
}

/** An event's item: raw (or the HogQL function's), cleaned, then grouped. */
export function referenceItem(spec: Pick<RefPaths, 'hogql' | 'cleaning' | 'groupings'>, e: RefEvent): string {
  let item = spec.hogql ? spec.hogql(e) : rawItemOf(e);
  for (const rule of spec.cleaning ?? []) item = item.replace(new RegExp(rule.regex, 'g'), rule.alias.replace(/\\(\d)/g, '$$$1'));
  return (spec.groupings ?? []).find((pattern) => containsWildcard(item, pattern)) ?? item;
}

export function referencePaths(spec: RefPaths, events: RefEvent[]): RefEdge[] {
  const itemOf = (e: RefEvent) => referenceItem(spec, e);
  const byPerson = new Map<string, RefEvent[]>();
  const excluded = new Set(spec.exclude ?? []);
  for (const e of events) if (e.ts >= spec.from && e.ts < spec.to && !excluded.has(itemOf(e))) byPerson.set(e.person, [...(byPerson.get(e.person) ?? []), e]);
  const edges = new Map<string, { value: number; total: number }>();
  for (const list of byPerson.values()) {
    list.sort((a, b) => a.ts - b.ts || (a.uuid < b.uuid ? -1 : 1));
    const sessions: Array<Array<{ item: string; ts: number }>> = [];
    list.forEach((e, i) => {
      if (i === 0 || e.ts - list[i - 1].ts >= 30 * 60_000) sessions.push([]);
      const session = sessions[sessions.length - 1];
      if (session.length === 0 || session[session.length - 1].item !== itemOf(e)) session.push({ item: itemOf(e), ts: e.ts });
    });
    for (const session of sessions) {
      let start = 0;
      if (spec.startPoint !== null) {
        start = session.findIndex((s) => s.item === spec.startPoint);
        if (start < 0) continue;
      }
      let path: typeof session;
      if (spec.endPoint !== null) {
        const end = session.findIndex((s, i) => i >= start && s.item === spec.endPoint);
        if (end < 0) continue;
        path = session.slice(Math.max(start, end - spec.stepLimit + 1), end + 1);
      } else {
        path = session.slice(start, start + spec.stepLimit);
      }
      for (let i = 0; i + 1 < path.length; i++) {
        const key = JSON.stringify([`${i + 1}_${path[i].item}`, `${i + 2}_${path[i + 1].item}`]);
        const edge = edges.get(key) ?? { value: 0, total: 0 };
        edge.value++;
        edge.total += path[i + 1].ts - path[i].ts;
        edges.set(key, edge);
      }
    }
  }
  return [...edges].map(([key, e]) => {
    const [source, target] = JSON.parse(key) as [string, string];
    return { source, target, value: e.value, average_conversion_time: e.total / e.value };
  });
}
