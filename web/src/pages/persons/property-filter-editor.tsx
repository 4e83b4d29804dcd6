import type { PropertyFilter } from '../../api/types';
import { OPERATORS, needsValue } from '../activity/filters';

interface Props {
  filters: PropertyFilter[];
  propertyNames: string[];
  onChange: (filters: PropertyFilter[]) => void;
  /** Whose properties: the labels say so (several editors on a page need distinct `idPrefix`es). */
  subject?: 'Person' | 'Event';
  idPrefix?: string;
}

/** Rows of property filters (key, condition, value), edited in place. */
export function PropertyFilterEditor({ filters, propertyNames, onChange, subject = 'Person', idPrefix = 'person' }: Props) {
  const listId = `${idPrefix}-property-names`;
  const set = (index: number, patch: Partial<PropertyFilter>) => onChange(filters.map((f, i) => (i === index ? { ...f, ...patch } : f)));
  return (
    <>
      <datalist id={listId}>
        {propertyNames.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {filters.map((filter, index) => (
        <fieldset class="filter-row property-filter" key={index}>
          <legend class="visually-hidden">
            {subject} property filter {index + 1}
          </legend>
          <label class="field">
            <span>{subject} property</span>
            <input list={listId} value={filter.key} onInput={(e) => set(index, { key: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field">
            <span>Condition</span>
            <select value={filter.operator ?? 'exact'} onChange={(e) => set(index, { operator: (e.target as HTMLSelectElement).value })}>
              {OPERATORS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </label>
          {needsValue(filter.operator) && (
            <label class="field">
              <span>Value</span>
              <input value={String(filter.value ?? '')} onInput={(e) => set(index, { value: (e.target as HTMLInputElement).value })} />
            </label>
          )}
          <button type="button" class="button-secondary button-small" aria-label={`Remove ${subject.toLowerCase()} property filter ${index + 1}`} onClick={() => onChange(filters.filter((_, i) => i !== index))}>
            Remove
          </button>
        </fieldset>
      ))}
    </>
  );
}
