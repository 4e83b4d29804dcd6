/** One step of an action: every field optional; the step matches when all given fields hold. */
import type { StepMatching } from '../../api/types';
import { PropertyFilterEditor } from '../persons/property-filter-editor';
import { MATCHING, type StepDraft } from './action-form';

interface Props {
  index: number;
  step: StepDraft;
  propertyNames: string[];
  onChange: (step: StepDraft) => void;
  onRemove: () => void;
}

export function StepEditor({ index, step, propertyNames, onChange, onRemove }: Props) {
  const n = index + 1;
  const set = (patch: Partial<StepDraft>) => onChange({ ...step, ...patch });
  const input = (field: keyof StepDraft) => (e: Event) => set({ [field]: (e.target as HTMLInputElement).value });
  const matching = (field: 'urlMatching' | 'textMatching' | 'hrefMatching', label: string) => (
    <label class="field field-narrow">
      <span>{label}</span>
      <select value={step[field]} onChange={(e) => set({ [field]: (e.target as HTMLSelectElement).value as StepMatching })}>
        {MATCHING.map((m) => (
          <option key={m.value} value={m.value}>
            {m.label}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <fieldset class="card action-step" data-step={n}>
      <legend>{index === 0 ? `Step ${n}` : `Or step ${n}`}</legend>
      <div class="filter-row">
        <label class="field">
          <span>Event</span>
          <input list="action-event-names" placeholder="Any event" value={step.event} onInput={input('event')} />
        </label>
      </div>
      <div class="filter-row">
        <label class="field">
          <span>URL</span>
          <input placeholder="Any URL" value={step.url} onInput={input('url')} />
        </label>
        {matching('urlMatching', 'URL matching')}
      </div>
      <div class="filter-row">
        <label class="field">
          <span>Element text</span>
          <input placeholder="Any text" value={step.text} onInput={input('text')} />
        </label>
        {matching('textMatching', 'Text matching')}
      </div>
      <div class="filter-row">
        <label class="field">
          <span>Link target (href)</span>
          <input placeholder="Any link" value={step.href} onInput={input('href')} />
        </label>
        {matching('hrefMatching', 'Link matching')}
      </div>
      <div class="filter-row">
        <label class="field">
          <span>CSS selector</span>
          <input class="mono" placeholder="e.g. button.buy or #signup > a" value={step.selector} onInput={input('selector')} />
        </label>
        <label class="field field-narrow">
          <span>Tag name</span>
          <input placeholder="e.g. button" value={step.tagName} onInput={input('tagName')} />
        </label>
      </div>
      <PropertyFilterEditor filters={step.properties} propertyNames={propertyNames} subject="Event" idPrefix={`step-${n}`} onChange={(properties) => set({ properties })} />
      <div class="filter-actions">
        <button type="button" class="button-secondary button-small" onClick={() => set({ properties: [...step.properties, { key: '', operator: 'exact', value: '', type: 'event' }] })}>
          Add property filter<span class="visually-hidden"> to step {n}</span>
        </button>
        <button type="button" class="button-secondary button-small" onClick={onRemove}>
          Remove step {n}
        </button>
      </div>
    </fieldset>
  );
}
