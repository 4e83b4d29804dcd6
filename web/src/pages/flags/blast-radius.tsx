/**
 * "How many match": the persons a release condition's properties match, of all persons — or, for
 * a group flag, the groups of its type, of all groups of that type (the API's user_blast_radius
 * with `group_type_index`) — and about how many of them its rollout percentage reaches. Counted on
 * request, since it tests every person (or group) of the project.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { projectApi, useProject } from '../../auth/project';
import { conditionProperties, type ConditionDraft } from './flag-form';

interface Radius {
  users_affected: number;
  total_users: number;
}

/** A group flag's type: its index, and its name for the words shown. */
export interface Aggregation {
  index: number;
  name: string;
}

export function BlastRadius({ index, condition, aggregation }: { index: number; condition: ConditionDraft; aggregation: Aggregation | null }) {
  const project = useProject();
  const [state, setState] = useState<{ counting: boolean; radius: Radius | null; error: string | null; counted: string | null }>({ counting: false, radius: null, error: null, counted: null });
  const groupTypeIndex = aggregation?.index ?? null;
  const properties = conditionProperties(condition, groupTypeIndex);
  const current = JSON.stringify([groupTypeIndex, properties]);
  const counted = aggregation ? `${aggregation.name} groups` : 'persons';
  const count = async () => {
    setState({ counting: true, radius: null, error: null, counted: null });
    try {
      const radius = await api<Radius>(projectApi(project, 'feature_flags/user_blast_radius/'), {
        method: 'POST',
        body: { condition: { properties }, ...(groupTypeIndex !== null && { group_type_index: groupTypeIndex }) },
      });
      setState({ counting: false, radius, error: null, counted: current });
    } catch (error) {
      setState({ counting: false, radius: null, error: (error as Error).message, counted: null });
    }
  };
  const rollout = Number(condition.rollout);
  const { radius } = state;
  return (
    <div class="blast-radius">
      <button type="button" class="button-secondary button-small" onClick={count} disabled={state.counting} aria-label={`Count the ${counted} condition set ${index + 1} matches`}>
        {state.counting ? 'Counting…' : 'How many match?'}
      </button>
      <span role="status" class="muted">
        {radius &&
          `${radius.users_affected.toLocaleString()} of ${radius.total_users.toLocaleString()} ${counted} match` +
            (Number.isFinite(rollout) && rollout < 100 ? `; about ${Math.round((radius.users_affected * rollout) / 100).toLocaleString()} with the ${rollout}% rollout.` : '.') +
            (state.counted !== current ? ' (The condition changed since: count again.)' : '')}
        {state.error && <span class="danger-text">{state.error}</span>}
      </span>
    </div>
  );
}
