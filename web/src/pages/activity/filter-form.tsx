import { useState } from 'preact/hooks';
import type { PropertyFilter } from '../../api/types';
import { NO_FILTERS, OPERATORS, needsValue, type ActivityFilters } from './filters';

interface Props {
  applied: ActivityFilters;
  eventNames: string[];
  propertyNames: string[];
  onApply: (filters: ActivityFilters) => void;
}

/** Filters by event, person (distinct id) and properties; applied on submit. */
export function FilterForm({ applied, eventNames, propertyNames, onApply }: Props) {
  const [draft, setDraft] = useState<ActivityFilters>(applied);
  const setProperty = (index: number, patch: Partial<PropertyFilter>) =>
    setDraft({ ...draft, properties: draft.properties.map((p, i) => (i === index ? { ...p, ...patch } : p)) });

  return (
    <form
      class="filters card"
      aria-label="Filter events"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft);
      }}
    >
      <div class="filter-row">
        <label class="field">
          <span>Event</span>
          <input list="event-names" name="event" placeholder="Any event" value={draft.event} onInput={(e) => setDraft({ ...draft, event: (e.target as HTMLInputElement).value })} />
        </label>
        <datalist id="event-names">
          {eventNames.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
        <label class="field">
          <span>Person (distinct ID)</span>
          <input name="distinct_id" placeholder="Anyone" value={draft.distinctId} onInput={(e) => setDraft({ ...draft, distinctId: (e.target as HTMLInputElement).value })} />
        </label>
      </div>
      <datalist id="property-names">
        {propertyNames.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {draft.properties.map((filter, index) => (
        <fieldset class="filter-row property-filter" key={index}>
          <legend class="visually-hidden">Property filter {index + 1}</legend>
          <label class="field">
            <span>Of</span>
            <select value={filter.type ?? 'event'} onChange={(e) => setProperty(index, { type: (e.target as HTMLSelectElement).value })}>
              <option value="event">Event property</option>
              <option value="person">Person property</option>
            </select>
          </label>
          <label class="field">
            <span>Property</span>
            <input list="property-names" value={filter.key} onInput={(e) => setProperty(index, { key: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field">
            <span>Condition</span>
            <select value={filter.operator ?? 'exact'} onChange={(e) => setProperty(index, { operator: (e.target as HTMLSelectElement).value })}>
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
              <input value={String(filter.value ?? '')} onInput={(e) => setProperty(index, { value: (e.target as HTMLInputElement).value })} />
            </label>
          )}
          <button
            type="button"
            class="button-secondary button-small"
            aria-label={`Remove property filter ${index + 1}`}
            onClick={() => setDraft({ ...draft, properties: draft.properties.filter((_, i) => i !== index) })}
          >
            Remove
          </button>
        </fieldset>
      ))}
      <div class="filter-actions">
        <button type="button" class="button-secondary" onClick={() => setDraft({ ...draft, properties: [...draft.properties, { key: '', operator: 'exact', value: '', type: 'event' }] })}>
          Add property filter
        </button>
        <button type="submit" class="button-primary">
          Apply filters
        </button>
        <button
          type="button"
          class="button-link"
          onClick={() => {
            setDraft(NO_FILTERS);
            onApply(NO_FILTERS);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
