/** One release condition: property filters, a rollout percentage and, for multivariate flags, a forced variant. */
import type { PropertyFilter } from '../../api/types';
import { BlastRadius, type Aggregation } from './blast-radius';
import { FLAG_OPERATORS, takesList, valueText, type ConditionDraft } from './flag-form';

interface Props {
  index: number;
  condition: ConditionDraft;
  /** Null for person flags; the group type's index and name for group flags. */
  aggregation: Aggregation | null;
  variants: string[] | null;
  onChange: (condition: ConditionDraft) => void;
  onRemove: (() => void) | null;
}

const takesValue = (operator: string | undefined) => operator !== 'is_set' && operator !== 'is_not_set';

export function ConditionEditor({ index, condition, aggregation, variants, onChange, onRemove }: Props) {
  const n = index + 1;
  const groupName = aggregation?.name ?? null;
  const defaultType = groupName === null ? 'person' : 'group';
  const setFilter = (i: number, patch: Partial<PropertyFilter>) =>
    onChange({ ...condition, properties: condition.properties.map((p, j) => (j === i ? { ...p, ...patch } : p)) });

  return (
    <fieldset class="card condition">
      <legend>Condition set {n}</legend>
      {condition.properties.length === 0 && <p class="muted">Matches every {groupName ?? 'user'}. Add a property to narrow it.</p>}
      {condition.properties.map((filter, i) => {
        const known = filter.type === 'person' || filter.type === 'group' || filter.type === undefined;
        return (
          <div class="filter-row" key={i} role="group" aria-label={`Condition ${n}, property ${i + 1}`}>
            {known ? (
              <span class="pill">{groupName === null ? 'Person property' : `${groupName} property`}</span>
            ) : (
              <span class="pill" title="Kept as stored; edit it through the API">
                {filter.type} filter
              </span>
            )}
            <label class="field">
              <span>Property</span>
              <input value={filter.key} disabled={!known} onInput={(e) => setFilter(i, { key: (e.target as HTMLInputElement).value, type: filter.type ?? defaultType })} />
            </label>
            <label class="field">
              <span>Operator</span>
              <select value={filter.operator ?? 'exact'} disabled={!known} onChange={(e) => setFilter(i, { operator: (e.target as HTMLSelectElement).value })}>
                {FLAG_OPERATORS.map((o) => (
                  <option key={o.value} value={o.value}>
                    {o.label}
                  </option>
                ))}
                {!FLAG_OPERATORS.some((o) => o.value === (filter.operator ?? 'exact')) && <option value={filter.operator ?? ''}>{filter.operator}</option>}
              </select>
            </label>
            {takesValue(filter.operator ?? 'exact') && (
              <label class="field">
                <span>{takesList(filter.operator) ? 'Values (comma-separated)' : 'Value'}</span>
                <input
                  value={valueText(filter)}
                  disabled={!known}
                  onInput={(e) => setFilter(i, { value: (e.target as HTMLInputElement).value })}
                />
              </label>
            )}
            <button
              type="button"
              class="button-secondary button-small"
              aria-label={`Remove property ${i + 1} of condition ${n}`}
              onClick={() => onChange({ ...condition, properties: condition.properties.filter((_, j) => j !== i) })}
            >
              Remove
            </button>
          </div>
        );
      })}
      <div class="condition-footer">
        <button
          type="button"
          class="button-secondary button-small"
          onClick={() => onChange({ ...condition, properties: [...condition.properties, { key: '', operator: 'exact', value: '', type: defaultType }] })}
        >
          Add property
        </button>
        <label class="field field-inline">
          <span>Roll out to (%)</span>
          <input type="number" min={0} max={100} step="any" required value={condition.rollout} onInput={(e) => onChange({ ...condition, rollout: (e.target as HTMLInputElement).value })} />
        </label>
        {variants && (
          <label class="field field-inline">
            <span>Variant</span>
            <select value={condition.variant} onChange={(e) => onChange({ ...condition, variant: (e.target as HTMLSelectElement).value })}>
              <option value="">Split by variant rollout</option>
              {variants.map((v) => (
                <option key={v} value={v}>
                  Always {v}
                </option>
              ))}
            </select>
          </label>
        )}
        <BlastRadius index={index} condition={condition} aggregation={aggregation} />
        {onRemove && (
          <button type="button" class="button-danger button-small" onClick={onRemove}>
            Remove condition set {n}
          </button>
        )}
      </div>
    </fieldset>
  );
}
