/** The Activity page's filters, and the events API parameters they become. */
import type { PropertyFilter } from '../../api/types.js';

export interface ActivityFilters {
  event: string;
  distinctId: string;
  properties: PropertyFilter[];
}

export const NO_FILTERS: ActivityFilters = { event: '', distinctId: '', properties: [] };

export const OPERATORS: { value: string; label: string; needsValue: boolean }[] = [
  { value: 'exact', label: 'equals', needsValue: true },
  { value: 'is_not', label: 'does not equal', needsValue: true },
  { value: 'icontains', label: 'contains', needsValue: true },
  { value: 'not_icontains', label: 'does not contain', needsValue: true },
  { value: 'regex', label: 'matches regex', needsValue: true },
  { value: 'gt', label: 'greater than', needsValue: true },
  { value: 'lt', label: 'less than', needsValue: true },
  { value: 'is_set', label: 'is set', needsValue: false },
  { value: 'is_not_set', label: 'is not set', needsValue: false },
];

export const needsValue = (operator: string | undefined) => OPERATORS.find((o) => o.value === operator)?.needsValue ?? true;

/** Complete property filters only (a key, and a value where the operator takes one). */
export function completeProperties(filters: PropertyFilter[]): PropertyFilter[] {
  return filters
    .filter((f) => f.key.trim() !== '' && (!needsValue(f.operator) || String(f.value ?? '') !== ''))
    .map((f) => (needsValue(f.operator) ? { ...f, key: f.key.trim() } : { key: f.key.trim(), operator: f.operator, type: f.type }));
}

export function eventsQuery(filters: ActivityFilters): Record<string, unknown> {
  const properties = completeProperties(filters.properties);
  return {
    event: filters.event.trim() || undefined,
    distinct_id: filters.distinctId.trim() || undefined,
    properties: properties.length ? properties : undefined,
  };
}

export const hasFilters = (filters: ActivityFilters) => Object.values(eventsQuery(filters)).some((v) => v !== undefined);
