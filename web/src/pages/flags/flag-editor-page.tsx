/**
 * Create or edit a flag: key and description, persons or a group type, release conditions,
 * variants and payloads, on/off, and how many persons a condition matches. The API validates
 * everything; its words are shown as they come.
 */
import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { FeatureFlag } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { PageHeader } from '../../components/shell';
import { ErrorNotice, Loading } from '../../components/status';
import { ConditionEditor } from './condition-editor';
import { bodyOf, draftOf, NEW_FLAG, type FlagDraft } from './flag-form';
import { useGroupTypes } from './group-types';
import { VariantsEditor } from './variants-editor';

export function FlagEditorPage() {
  const project = useProject();
  const { params } = useRoute();
  const isNew = params.flagId === 'new';
  const stored = useResource(
    (signal) => (isNew ? Promise.resolve(null) : api<FeatureFlag>(projectApi(project, `feature_flags/${params.flagId}/`), { signal })),
    [project.id, params.flagId],
  );
  if (stored.error) return <ErrorNotice error={stored.error} retry={stored.reload} />;
  if (stored.data === undefined) return <Loading label="Loading the flag…" />;
  return <FlagEditor key={params.flagId} flag={stored.data} />;
}

function FlagEditor({ flag }: { flag: FeatureFlag | null }) {
  const project = useProject();
  const { route } = useLocation();
  const groupTypes = useGroupTypes();
  const [draft, setDraft] = useState<FlagDraft>(flag ? draftOf(flag) : NEW_FLAG);
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<FlagDraft>) => setDraft((d) => ({ ...d, ...patch }));
  const groupName = draft.aggregation === '' ? null : groupTypes[draft.aggregation] ?? `group type ${draft.aggregation}`;
  const payloadKeys = draft.multivariate ? draft.variants.map((v) => v.key).filter(Boolean) : ['true'];
  const list = `${project.base}/feature_flags`;

  useEffect(() => setError(null), [draft]);

  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      const body = bodyOf(draft);
      if (flag) await api(projectApi(project, `feature_flags/${flag.id}/`), { method: 'PATCH', body });
      else await api(projectApi(project, 'feature_flags/'), { method: 'POST', body });
      route(list);
    } catch (failure) {
      setError(failure as Error);
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!flag || !confirm(`Delete the flag “${flag.key}”? SDKs stop receiving it at once.`)) return;
    try {
      await api(projectApi(project, `feature_flags/${flag.id}/`), { method: 'PATCH', body: { deleted: true } });
      route(list);
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <>
      <PageHeader title={flag ? `Feature flag ${flag.key}` : 'New feature flag'}>
        <a class="button button-secondary" href={list}>
          Back to flags
        </a>
      </PageHeader>
      <form class="flag-form" onSubmit={save} aria-label={flag ? `Edit ${flag.key}` : 'New feature flag'}>
        <fieldset class="card">
          <legend>Flag</legend>
          <label class="field">
            <span>Key</span>
            <input name="key" required pattern="[A-Za-z0-9_\-]+" title="Letters, numbers, - and _" value={draft.key} onInput={(e) => set({ key: (e.target as HTMLInputElement).value })} />
          </label>
          <label class="field">
            <span>Description</span>
            <textarea name="name" rows={2} value={draft.name} onInput={(e) => set({ name: (e.target as HTMLTextAreaElement).value })} />
          </label>
          <label class="toggle">
            <input type="checkbox" name="active" checked={draft.active} onChange={(e) => set({ active: (e.target as HTMLInputElement).checked })} />
            Enabled
          </label>
          <label class="toggle">
            <input type="checkbox" checked={draft.continuity} onChange={(e) => set({ continuity: (e.target as HTMLInputElement).checked })} />
            Keep the same value when an anonymous user signs in (experience continuity)
          </label>
          <label class="field">
            <span>Match by</span>
            <select value={draft.aggregation} onChange={(e) => set({ aggregation: (e.target as HTMLSelectElement).value })}>
              <option value="">Users (persons)</option>
              {Object.entries(groupTypes).map(([index, name]) => (
                <option key={index} value={index}>
                  Groups: {name}
                </option>
              ))}
              {draft.aggregation !== '' && !(draft.aggregation in groupTypes) && <option value={draft.aggregation}>Group type {draft.aggregation}</option>}
            </select>
          </label>
          {Object.keys(groupTypes).length === 0 && <p class="hint">Group flags become available once events with groups (posthog.group()) have arrived.</p>}
        </fieldset>

        <h2 class="section-title">Release conditions</h2>
        <p class="hint">A {groupName ?? 'user'} gets the flag when they match any condition set and fall within its rollout.</p>
        {draft.conditions.map((condition, i) => (
          <ConditionEditor
            key={i}
            index={i}
            condition={condition}
            aggregation={groupName === null ? null : { index: Number(draft.aggregation), name: groupName }}
            variants={draft.multivariate ? draft.variants.map((v) => v.key).filter(Boolean) : null}
            onChange={(next) => set({ conditions: draft.conditions.map((c, j) => (j === i ? next : c)) })}
            onRemove={draft.conditions.length > 1 ? () => set({ conditions: draft.conditions.filter((_, j) => j !== i) }) : null}
          />
        ))}
        <button type="button" class="button-secondary" onClick={() => set({ conditions: [...draft.conditions, { properties: [], rollout: '100', variant: '' }] })}>
          Add condition set
        </button>

        <h2 class="section-title">Variants</h2>
        <label class="toggle">
          <input type="checkbox" checked={draft.multivariate} onChange={(e) => set({ multivariate: (e.target as HTMLInputElement).checked })} />
          Multiple variants (the flag returns a variant key instead of true)
        </label>
        {draft.multivariate && <VariantsEditor variants={draft.variants} onChange={(variants) => set({ variants })} />}

        <fieldset class="card">
          <legend>Payloads</legend>
          <p class="hint">Optional JSON sent with the flag's value ({draft.multivariate ? 'one per variant' : 'when the flag is true'}).</p>
          {payloadKeys.map((key) => (
            <label class="field" key={key}>
              <span>Payload for {key === 'true' ? 'true' : `variant ${key}`}</span>
              <textarea
                class="mono"
                rows={3}
                placeholder='{"example": 1}'
                value={draft.payloads[key] ?? ''}
                onInput={(e) => set({ payloads: { ...draft.payloads, [key]: (e.target as HTMLTextAreaElement).value } })}
              />
            </label>
          ))}
        </fieldset>

        <ErrorNotice error={error} />
        <div class="form-actions">
          <button type="submit" class="button-primary" disabled={busy}>
            {busy ? 'Saving…' : flag ? 'Save changes' : 'Create flag'}
          </button>
          {flag && (
            <button type="button" class="button-danger" onClick={() => void remove()}>
              Delete flag
            </button>
          )}
        </div>
      </form>
    </>
  );
}
