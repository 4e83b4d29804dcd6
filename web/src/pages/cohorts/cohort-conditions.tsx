/**
 * A dynamic cohort's conditions: the top group's own conditions, all or any of them, and groups of
 * conditions inside it, each with its own all/any. A group counts as one condition of the top group
 * (PostHog's `{type, values: [..., {type, values: [...]}]}`).
 */
import type { PropertyFilter } from '../../api/types';
import { PropertyFilterEditor } from '../persons/property-filter-editor';
import { addBehaviour, BehaviourEditor } from './behaviour-editor';
import { NEW_CRITERIA, type CohortDraft, type Criteria } from './cohort-form';

interface Lists {
  eventNames: string[];
  propertyNames: string[];
}

const NEW_PERSON_FILTER: PropertyFilter = { key: '', operator: 'exact', value: '', type: 'person' };

/** One group's all/any choice, its person and behaviour conditions, and the buttons adding them. */
function CriteriaEditor({ criteria, group, lists, onChange }: { criteria: Criteria; group: number | null; lists: Lists; onChange: (patch: Partial<Criteria>) => void }) {
  const whose = group === null ? '' : ` to group ${group}`;
  const idPrefix = group === null ? 'cohort' : `cohort-group-${group}`;
  return (
    <>
      <label class="field field-inline">
        <span>{group === null ? 'Persons must match' : `Group ${group} must match`}</span>
        <select value={criteria.match} onChange={(e) => onChange({ match: (e.target as HTMLSelectElement).value as Criteria['match'] })}>
          <option value="AND">all conditions</option>
          <option value="OR">any condition</option>
        </select>
      </label>
      <PropertyFilterEditor filters={criteria.persons} propertyNames={lists.propertyNames} idPrefix={idPrefix} onChange={(persons) => onChange({ persons })} />
      <BehaviourEditor behaviours={criteria.behaviours} eventNames={lists.eventNames} idPrefix={idPrefix} onChange={(behaviours) => onChange({ behaviours })} />
      <div class="filter-actions">
        <button type="button" class="button-secondary" aria-label={`Add person property condition${whose}`} onClick={() => onChange({ persons: [...criteria.persons, { ...NEW_PERSON_FILTER }] })}>
          Add person property condition
        </button>
        <button type="button" class="button-secondary" aria-label={`Add behaviour condition${whose}`} onClick={() => onChange({ behaviours: addBehaviour(criteria.behaviours) })}>
          Add behaviour condition
        </button>
      </div>
    </>
  );
}

export function CohortConditions({ draft, lists, onChange }: { draft: CohortDraft; lists: Lists; onChange: (patch: Partial<CohortDraft>) => void }) {
  const setGroup = (index: number, patch: Partial<Criteria>) => onChange({ groups: draft.groups.map((g, i) => (i === index ? { ...g, ...patch } : g)) });
  const empty = draft.persons.length === 0 && draft.behaviours.length === 0 && draft.groups.length === 0;
  return (
    <fieldset class="card filters">
      <legend>Conditions</legend>
      <CriteriaEditor criteria={draft} group={null} lists={lists} onChange={onChange} />
      {draft.groups.map((criteria, index) => (
        <fieldset class="criteria-group" data-group={index + 1} key={index}>
          <legend>Group {index + 1}</legend>
          <CriteriaEditor criteria={criteria} group={index + 1} lists={lists} onChange={(patch) => setGroup(index, patch)} />
          {criteria.persons.length === 0 && criteria.behaviours.length === 0 && <p class="hint">An empty group matches every person.</p>}
          <button type="button" class="button-danger button-small" onClick={() => onChange({ groups: draft.groups.filter((_, i) => i !== index) })}>
            Remove group {index + 1}
          </button>
        </fieldset>
      ))}
      {empty && <p class="hint">Without conditions the cohort holds every person of the project.</p>}
      <div class="filter-actions">
        <button type="button" class="button-secondary" onClick={() => onChange({ groups: [...draft.groups, { ...NEW_CRITERIA }] })}>
          Add group of conditions
        </button>
      </div>
    </fieldset>
  );
}
