import { INTERVALS, NEW_BEHAVIOUR, TIMES_OPERATORS, type Behaviour, type Interval, type TimesOperator } from './cohort-form';

interface Props {
  behaviours: Behaviour[];
  eventNames: string[];
  onChange: (behaviours: Behaviour[]) => void;
  /** Distinct per editor on a page (its list of event names is named after it). */
  idPrefix?: string;
}

/** Rows of "performed (or did not perform) event X at least N times in the last N days", edited in place. */
export function BehaviourEditor({ behaviours, eventNames, onChange, idPrefix = 'cohort' }: Props) {
  const listId = `${idPrefix}-event-names`;
  const set = (index: number, patch: Partial<Behaviour>) => onChange(behaviours.map((b, i) => (i === index ? { ...b, ...patch } : b)));
  return (
    <>
      <datalist id={listId}>
        {eventNames.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {behaviours.map((b, index) => (
        <fieldset class="filter-row behaviour-condition" key={index}>
          <legend class="visually-hidden">Behaviour condition {index + 1}</legend>
          <label class="field field-narrow">
            <span>Behaviour</span>
            <select value={b.negated ? 'not' : 'did'} onChange={(e) => set(index, { negated: (e.target as HTMLSelectElement).value === 'not' })}>
              <option value="did">performed</option>
              <option value="not">did not perform</option>
            </select>
          </label>
          <label class="field">
            <span>Event</span>
            <input list={listId} value={b.event} required onInput={(e) => set(index, { event: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field field-narrow">
            <span>How often</span>
            <select value={b.operator} onChange={(e) => set(index, { operator: (e.target as HTMLSelectElement).value as TimesOperator })}>
              {TIMES_OPERATORS.map((o) => (
                <option key={o.value} value={o.value}>
                  {o.label}
                </option>
              ))}
            </select>
          </label>
          <label class="field field-narrow">
            <span>Times</span>
            <input type="number" min={0} step={1} value={b.times} onInput={(e) => set(index, { times: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field field-narrow">
            <span>In the last</span>
            <input type="number" min={1} step={1} value={b.within} onInput={(e) => set(index, { within: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field field-narrow">
            <span>Period</span>
            <select value={b.interval} onChange={(e) => set(index, { interval: (e.target as HTMLSelectElement).value as Interval })}>
              {INTERVALS.map((i) => (
                <option key={i.value} value={i.value}>
                  {i.label}
                </option>
              ))}
            </select>
          </label>
          <button type="button" class="button-secondary button-small" aria-label={`Remove behaviour condition ${index + 1}`} onClick={() => onChange(behaviours.filter((_, i) => i !== index))}>
            Remove
          </button>
        </fieldset>
      ))}
    </>
  );
}

export const addBehaviour = (behaviours: Behaviour[]) => [...behaviours, { ...NEW_BEHAVIOUR }];
