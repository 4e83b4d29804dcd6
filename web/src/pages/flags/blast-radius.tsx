/**
 * "How many persons match": the persons a release condition's properties match, of all persons
 * (the API's user_blast_radius), and about how many of them its rollout percentage reaches.
 * Counted on request, since it tests every person of the project.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import { projectApi, useProject } from '../../auth/project';
import { conditionProperties, type ConditionDraft } from './flag-form';

interface Radius {
  users_affected: number;
  total_users: number;
}

export function BlastRadius({ index, condition }: { index: number; condition: ConditionDraft }) {
  const project = useProject();
  const [state, setState] = useState<{ counting: boolean; radius: Radius | null; error: string | null; counted: string | null }>({ counting: false, radius: null, error: null, counted: null });
  const properties = conditionProperties(condition, null);
  const current = JSON.stringify(properties);
  const count = async () => {
    setState({ counting: true, radius: null, error: null, counted: null });
    try {
      const radius = await api<Radius>(projectApi(project, 'feature_flags/user_blast_radius/'), { method: 'POST', body: { condition: { properties } } });
      setState({ counting: false, radius, error: null, counted: current });
    } catch (error) {
      setState({ counting: false, radius: null, error: (error as Error).message, counted: null });
    }
  };
  const rollout = Number(condition.rollout);
  const { radius } = state;
  return (
    <div class="blast-radius">
      <button type="button" class="button-secondary button-small" onClick={count} disabled={state.counting} aria-label={`Count the persons condition set ${index + 1} matches`}>
        {state.counting ? 'Counting…' : 'How many match?'}
      </button>
      <span role="status" class="muted">
        {radius &&
          `${radius.users_affected.toLocaleString()} of ${radius.total_users.toLocaleString()} persons match` +
            (Number.isFinite(rollout) && rollout < 100 ? `; about ${Math.round((radius.users_affected * rollout) / 100).toLocaleString()} with the ${rollout}% rollout.` : '.') +
            (state.counted !== current ? ' (The condition changed since: count again.)' : '')}
        {state.error && <span class="danger-text">{state.error}</span>}
      </span>
    </div>
  );
}
