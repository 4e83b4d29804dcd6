/**
 * What a calculation reads from the event store for its behavioural filters: per person, how
 * many times they performed the event in the window. One grouped statement per distinct
 * (event, window), built as IR so that any event store's dialect prints it.
 */
import { EventsScope, ir, lazyJoins, timestampText } from '../hogql/index.js';
import { runner } from '../events/run.js';
import type { BehavioralFilter } from '../flags/engine/cohorts.js';
import type { EventStore } from '../store/types.js';

/** Person uuid → events performed, per filter (persons with none are absent). */
export type EventCounts = Map<BehavioralFilter, Map<string, number>>;

export async function countEvents(events: EventStore, projectId: number, filters: readonly BehavioralFilter[], now: Date): Promise<EventCounts> {
  const run = runner(events, null);
  const byWindow = new Map<string, Map<string, number>>();
  const counts: EventCounts = new Map();
  for (const filter of filters) {
    const key = JSON.stringify([filter.event, filter.windowMs]);
    let perPerson = byWindow.get(key);
    if (!perPerson) {
      perPerson = new Map();
      for (const row of await run(countStatement(projectId, filter, now))) perPerson.set(String(row.person), Number(row.n));
      byWindow.set(key, perPerson);
    }
    counts.set(filter, perPerson);
  }
  return counts;
}

function countStatement(projectId: number, filter: BehavioralFilter, now: Date): ir.IrSelect {
  const scope = new EventsScope({ propertyType: () => null, now }, projectId);
  const person = scope.field(['person_id'], 0);
  const timestamp = ir.column('e', 'events', 'timestamp', 'DateTime');
  const at = (ms: number) => ir.constant(timestampText(new Date(ms)), 'DateTime');
  return ir.select({
    columns: [
      { name: 'person', expr: person },
      { name: 'n', expr: ir.call('count', [], 'Integer') },
    ],
    from: { kind: 'table', table: 'events', alias: 'e', projectId },
    joins: lazyJoins(scope.binding),
    where: ir.allOf([
      ir.op('=', [ir.column('e', 'events', 'event', 'String'), ir.constant(filter.event, 'String')]),
      ir.op('>=', [timestamp, at(now.getTime() - filter.windowMs)]),
      ir.op('<=', [timestamp, at(now.getTime())]),
    ]),
    groupBy: [person],
  });
}
