/**
 * Paths from an in-memory event list with plain loops (query-api.md §1.12, as docs/insights.md
 * states Sightline's rules): items, excluded items dropped, 30-minute sessions, repeats
 * collapsed, start/end points, step limit, then edges counted.
 */
import type { RefEvent } from './funnels.js';

export interface RefPaths {
  startPoint: string | null;
  endPoint: string | null;
  stepLimit: number;
  /** Items left out before sessions are made (pathsFilter.excludeEvents). */
  exclude?: string[];
  from: number;
  to: number;
}

export interface RefEdge {
  source: string;
  target: string;
  value: number;
  average_conversion_time: number;
}

const itemOf = (e: RefEvent) => {
  if (e.event === '$pageview') {
    const url = String(e.properties.$current_url ?? '');
    return url.length > 1 && url.endsWith('/') ? url.slice(0, -1) : url;
  }
  return e.event;
};

export function referencePaths(spec: RefPaths, events: RefEvent[]): RefEdge[] {
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
