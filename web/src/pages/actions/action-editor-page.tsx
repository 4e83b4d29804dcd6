/**
 * Create or edit an action: name, description and its steps (an event matches the action when it
 * matches any step). An existing action shows the events it matches (the events API's
 * `action_id`) and can be deleted (soft: the API keeps it, and it can be restored there).
 */
import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../../api/client';
import type { Action, Page, StoredEvent } from '../../api/types';
import { useEventNames, usePropertyNames } from '../../api/use-definitions';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { PageHeader } from '../../components/shell';
import { NameFields } from '../../components/name-fields';
import { ErrorNotice, Loading, ObjectPending } from '../../components/status';
import { EventTable } from '../activity/event-table';
import { NEW_STEP, stepDraftOf, stepOf, type StepDraft } from './action-form';
import { StepEditor } from './step-editor';

const EVENTS_SHOWN = 20;

interface ActionDraft {
  name: string;
  description: string;
  steps: StepDraft[];
}

export function ActionEditorPage() {
  const project = useProject();
  const { params } = useRoute();
  const isNew = params.actionId === 'new';
  const stored = useResource((signal) => (isNew ? Promise.resolve(null) : api<Action>(projectApi(project, `actions/${params.actionId}/`), { signal })), [project.id, params.actionId]);

  // Until this address's action has arrived, the previous address's answer may still be held.
  const current = isNew ? null : stored.data?.id === Number(params.actionId) ? stored.data : undefined;
  if (current === undefined) return <ObjectPending resource={stored} noun="action" listHref={`${project.base}/actions`} listName="actions" />;
  const action = current;
  return (
    <>
      <PageHeader title={action ? `Action ${action.name}` : 'New action'}>
        <a class="button button-secondary" href={`${project.base}/actions`}>
          Back to actions
        </a>
      </PageHeader>
      {action?.deleted && <p class="notice notice-error">This action is deleted: insights and the event list no longer accept it.</p>}
      <ActionEditor key={action?.id ?? 'new'} action={action} onSaved={stored.reload} />
      {action && !action.deleted && <MatchingEvents action={action} />}
    </>
  );
}

function ActionEditor({ action, onSaved }: { action: Action | null; onSaved: () => void }) {
  const project = useProject();
  const { route } = useLocation();
  const eventNames = useEventNames(project);
  const propertyNames = usePropertyNames(project, 'event');
  const [draft, setDraft] = useState<ActionDraft>(
    action ? { name: action.name, description: action.description ?? '', steps: action.steps.map(stepDraftOf) } : { name: '', description: '', steps: [{ ...NEW_STEP }] },
  );
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const list = `${project.base}/actions`;

  useEffect(() => {
    setError(null);
    setSaved(false);
  }, [draft]);

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const body = { name: draft.name, description: draft.description, steps: draft.steps.map(stepOf) };
    try {
      if (action) {
        await api(projectApi(project, `actions/${action.id}/`), { method: 'PATCH', body });
        setSaved(true);
        onSaved();
      } else {
        const created = await api<Action>(projectApi(project, 'actions/'), { method: 'POST', body });
        route(`${list}/${created.id}`);
      }
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!action || !confirm(`Delete the action “${action.name}”? Insights that use it will say so instead of drawing.`)) return;
    try {
      await api(projectApi(project, `actions/${action.id}/`), { method: 'PATCH', body: { deleted: true } });
      route(list);
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <form class="action-form" onSubmit={save} aria-label={action ? `Edit ${action.name}` : 'New action'}>
      <fieldset class="card">
        <legend>Action</legend>
        <NameFields name={draft.name} description={draft.description} onChange={(patch) => setDraft({ ...draft, ...patch })} />
      </fieldset>
      <h2 class="section-title">Steps</h2>
      <p class="hint">An event matches the action when it matches any step; a step matches when every field filled in holds. Element text, link, selector and tag are checked on autocaptured elements.</p>
      <datalist id="action-event-names">
        {eventNames.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {draft.steps.map((step, i) => (
        <StepEditor
          key={i}
          index={i}
          step={step}
          propertyNames={propertyNames}
          onChange={(next) => setDraft({ ...draft, steps: draft.steps.map((s, j) => (j === i ? next : s)) })}
          onRemove={() => setDraft({ ...draft, steps: draft.steps.filter((_, j) => j !== i) })}
        />
      ))}
      {draft.steps.length === 0 && <p class="hint">Without steps the action matches no event.</p>}
      <button type="button" class="button-secondary" onClick={() => setDraft({ ...draft, steps: [...draft.steps, { ...NEW_STEP }] })}>
        Add step
      </button>
      <ErrorNotice error={error} />
      {saved && (
        <p class="notice notice-success" role="status">
          Saved.
        </p>
      )}
      <div class="form-actions">
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? 'Saving…' : action ? 'Save changes' : 'Create action'}
        </button>
        {action && !action.deleted && (
          <button type="button" class="button-danger" onClick={() => void remove()}>
            Delete action
          </button>
        )}
      </div>
    </form>
  );
}

/** The newest events the saved action matches. */
function MatchingEvents({ action }: { action: Action }) {
  const project = useProject();
  const events = useResource(
    (signal) => api<Page<StoredEvent>>(projectApi(project, `events/${query({ action_id: action.id, limit: EVENTS_SHOWN })}`), { signal }),
    [project.id, action.id, action.last_calculated_at],
  );
  return (
    <section aria-labelledby="matching-heading" class="matching-events">
      <h2 id="matching-heading" class="section-title">
        Matching events
        {events.data && <span class="muted"> (newest {Math.min(events.data.results.length, EVENTS_SHOWN)}, as saved)</span>}
      </h2>
      <ErrorNotice error={events.error} retry={events.reload} />
      {events.data === undefined && events.loading ? (
        <Loading label="Finding matching events…" />
      ) : events.data && events.data.results.length === 0 ? (
        <p class="hint">No stored event matches this action yet.</p>
      ) : events.data ? (
        <EventTable events={events.data.results} />
      ) : null}
    </section>
  );
}
