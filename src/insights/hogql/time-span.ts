/**
 * A time span for a HogQL statement's calendar functions (PrintOptions.timeSpan): the instants
 * the statement compares the events' `timestamp` with, widened by a day, or the year up to now
 * when it bounds nothing. It is only a speed hint — the printer converts times inside the span
 * with integer arithmetic and still hands anything outside it to the time-zone library — so a
 * statement whose bounds are expressions we do not read is as correct as one whose bounds we do.
 */
import { timestampMs } from '../../hogql/dates.js';
import type { ir } from '../../hogql/index.js';

const DAY_MS = 86_400_000;
const COMPARISONS = new Set(['<', '<=', '>', '>=', '=']);
/** Without bounds: the year before now, where most statements' rows are. */
const UNBOUNDED_BACK_MS = 366 * DAY_MS;

export function statementTimeSpan(query: ir.IrQuery, now: Date): { from: Date; to: Date } {
  const bounds: number[] = [];
  visit(query, (node) => {
    if (node.kind !== 'op' || !COMPARISONS.has(String(node.op)) || !Array.isArray(node.args)) return;
    const args = node.args as Record<string, unknown>[];
    if (!args.some(isEventTimestamp)) return;
    for (const arg of args) if (!isEventTimestamp(arg)) visit(arg, (n) => n.kind === 'const' && n.type === 'DateTime' && typeof n.value === 'string' && bounds.push(timestampMs(n.value)));
  });
  const found = bounds.filter(Number.isFinite);
  const from = found.length > 0 ? Math.min(...found) : now.getTime() - UNBOUNDED_BACK_MS;
  const to = Math.max(now.getTime(), ...found);
  return { from: new Date(from - DAY_MS), to: new Date(to + DAY_MS) };
}

const isEventTimestamp = (node: Record<string, unknown>) => node.kind === 'column' && node.base === 'events' && node.name === 'timestamp';

/** Every object node of the IR (plain data), depth first. */
function visit(node: unknown, see: (node: Record<string, unknown>) => unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) visit(item, see);
  } else if (node !== null && typeof node === 'object') {
    see(node as Record<string, unknown>);
    for (const value of Object.values(node)) visit(value, see);
  }
}
