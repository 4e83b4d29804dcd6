/**
 * Create or edit a cohort. Dynamic: person property and behaviour conditions, all or any of
 * them, and groups of them (cohort-conditions.tsx), recalculated by the server (the page follows
 * `is_calculating`). Static: persons from a CSV file, the API's refusal of bad rows shown row by
 * row. An existing cohort also shows its members and can be deleted.
 */
import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../../api/client';
import type { Cohort } from '../../api/types';
import { useEventNames, usePropertyNames } from '../../api/use-definitions';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { PageHeader } from '../../components/shell';
import { NameFields } from '../../components/name-fields';
import { ErrorNotice, ObjectPending } from '../../components/status';
import { CohortConditions } from './cohort-conditions';
import { CohortMembers } from './cohort-members';
import { draftOf, filtersOf, NEW_COHORT, type CohortDraft } from './cohort-form';
import { CohortCount, CohortState, usePollWhileCalculating } from './cohort-state';
import { CsvUpload, CsvUploadError } from './csv-upload';

export function CohortEditorPage() {
  const project = useProject();
  const { params } = useRoute();
  const isNew = params.cohortId === 'new';
  const stored = useResource((signal) => (isNew ? Promise.resolve(null) : api<Cohort>(projectApi(project, `cohorts/${params.cohortId}/`), { signal })), [project.id, params.cohortId]);
  usePollWhileCalculating(stored.data ? [stored.data] : undefined, stored.reload);

  // Until this address's cohort has arrived, the previous address's answer may still be held.
  const current = isNew ? null : stored.data?.id === Number(params.cohortId) ? stored.data : undefined;
  if (current === undefined) return <ObjectPending resource={stored} noun="cohort" listHref={`${project.base}/cohorts`} listName="cohorts" />;
  const cohort = current;
  return (
    <>
      <PageHeader title={cohort ? `Cohort ${cohort.name}` : 'New cohort'}>
        <a class="button button-secondary" href={`${project.base}/cohorts`}>
          Back to cohorts
        </a>
      </PageHeader>
      {cohort && (
        <dl class="facts card cohort-facts">
          <div>
            <dt>Persons</dt>
            <dd class="cohort-count">
              <CohortCount cohort={cohort} />
            </dd>
          </div>
          <div>
            <dt>Kind</dt>
            <dd>{cohort.is_static ? 'Static (uploaded)' : 'Dynamic (recalculated)'}</dd>
          </div>
          {!cohort.is_static && (
            <div>
              <dt>Last calculated</dt>
              <dd>
                <CohortState cohort={cohort} />
              </dd>
            </div>
          )}
        </dl>
      )}
      {cohort?.last_error && cohort.errors_calculating > 0 && <p class="notice notice-error">The last calculation failed: {cohort.last_error}</p>}
      <CohortEditor key={cohort?.id ?? 'new'} cohort={cohort} onSaved={stored.reload} />
      {cohort && <CohortMembers cohort={cohort} />}
    </>
  );
}

function CohortEditor({ cohort, onSaved }: { cohort: Cohort | null; onSaved: () => void }) {
  const project = useProject();
  const { route } = useLocation();
  const eventNames = useEventNames(project);
  const propertyNames = usePropertyNames(project, 'person');
  const [draft, setDraft] = useState<CohortDraft>(cohort ? draftOf(cohort) : NEW_COHORT);
  const [csv, setCsv] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const [saved, setSaved] = useState(false);
  const set = (patch: Partial<CohortDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const list = `${project.base}/cohorts`;

  const changed = () => {
    setError(null);
    setSaved(false);
  };
  useEffect(changed, [draft]);

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const body: Record<string, unknown> = { name: draft.name, description: draft.description };
    if (!draft.isStatic) body.filters = filtersOf(draft);
    if (draft.isStatic && csv.trim() !== '') body.csv = csv;
    try {
      if (cohort) {
        await api(projectApi(project, `cohorts/${cohort.id}/`), { method: 'PATCH', body });
        setCsv('');
        setSaved(true);
        onSaved();
      } else {
        const created = await api<Cohort>(projectApi(project, 'cohorts/'), { method: 'POST', body: { ...body, is_static: draft.isStatic } });
        route(`${list}/${created.id}`);
      }
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!cohort || !confirm(`Delete the cohort “${cohort.name}”? Filters and flags that use it will match nobody.`)) return;
    try {
      await api(projectApi(project, `cohorts/${cohort.id}/`), { method: 'DELETE' });
      route(list);
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <form class="cohort-form" onSubmit={save} aria-label={cohort ? `Edit ${cohort.name}` : 'New cohort'}>
      <fieldset class="card">
        <legend>Cohort</legend>
        <NameFields name={draft.name} description={draft.description} onChange={set} />
        {!cohort && (
          <fieldset class="choice-row">
            <legend>Kind</legend>
            <label class="toggle">
              <input type="radio" name="kind" checked={!draft.isStatic} onChange={() => set({ isStatic: false })} />
              Dynamic: persons matching conditions, recalculated as events arrive
            </label>
            <label class="toggle">
              <input type="radio" name="kind" checked={draft.isStatic} onChange={() => set({ isStatic: true })} />
              Static: a list of persons uploaded as CSV
            </label>
          </fieldset>
        )}
      </fieldset>

      {draft.isStatic ? (
        <CsvUpload
          csv={csv}
          adding={cohort !== null}
          onChange={(text) => {
            setCsv(text);
            changed();
          }}
        />
      ) : draft.unsupported !== null ? (
        <section class="card" aria-labelledby="definition-heading">
          <h2 id="definition-heading" class="section-title">
            Conditions
          </h2>
          <p class="hint">This definition uses parts the editor does not offer (groups inside groups, negated person conditions, other cohorts, lists of values or date conditions); it is kept as stored. Change it through the API.</p>
          <figure class="code-block">
            <pre>{JSON.stringify(draft.unsupported, null, 2)}</pre>
          </figure>
        </section>
      ) : (
        <CohortConditions draft={draft} lists={{ eventNames, propertyNames }} onChange={set} />
      )}

      {error instanceof ApiError && error.attr === 'csv' ? <CsvUploadError error={error} /> : <ErrorNotice error={error} />}
      {saved && (
        <p class="notice notice-success" role="status">
          Saved.
        </p>
      )}
      <div class="form-actions">
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? 'Saving…' : cohort ? 'Save changes' : 'Create cohort'}
        </button>
        {cohort && (
          <button type="button" class="button-danger" onClick={() => void remove()}>
            Delete cohort
          </button>
        )}
      </div>
    </form>
  );
}
