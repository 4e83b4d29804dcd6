/** A person's properties: each can be edited or removed, and new ones added (as `$set` / `$unset` events). */
import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Person } from '../../api/types';
import { projectApi, useProject } from '../../auth/project';
import { DataTable } from '../../components/data-table';
import { valueText } from '../../components/format';
import { ErrorNotice } from '../../components/status';
import { parseValue } from './property-value';

export function PersonProperties({ person, onChanged }: { person: Person; onChanged: () => void }) {
  const project = useProject();
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const [adding, setAdding] = useState({ key: '', value: '' });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const entries = Object.entries(person.properties).sort(([a], [b]) => a.localeCompare(b));

  const run = async (path: string, body: unknown) => {
    setBusy(true);
    setError(null);
    try {
      await api(projectApi(project, `persons/${person.id}/${path}`), { method: 'POST', body });
      setEditing(null);
      onChanged();
      return true;
    } catch (failure) {
      setError(failure as Error);
      return false;
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="properties-heading">
      <h2 id="properties-heading" class="section-title">
        Properties <span class="muted">({entries.length})</span>
      </h2>
      <ErrorNotice error={error} />
      {entries.length === 0 ? (
        <p class="hint">This person has no properties. Add one below, or send them with <code>$set</code> in an event.</p>
      ) : (
        <DataTable caption={`Properties of the person`} class="properties-table" columns={[{ label: 'Property' }, { label: 'Value' }, { label: 'Actions', hidden: true }]}>
          {entries.map(([key, value]) => (
            <tr key={key}>
              <th scope="row" class="mono">
                {key}
              </th>
              <td class="mono break">
                {editing === key ? (
                  <form
                    class="inline-form"
                    onSubmit={(e) => {
                      e.preventDefault();
                      void run('update_property/', { key, value: parseValue(draft, value) });
                    }}
                  >
                    <label class="field field-inline">
                      <span class="visually-hidden">New value of {key}</span>
                      <input value={draft} onInput={(e) => setDraft((e.target as HTMLInputElement).value)} autoFocus />
                    </label>
                    <button type="submit" class="button-primary button-small" disabled={busy}>
                      Save<span class="visually-hidden"> {key}</span>
                    </button>
                    <button type="button" class="button-link" onClick={() => setEditing(null)}>
                      Cancel
                    </button>
                  </form>
                ) : (
                  valueText(value)
                )}
              </td>
              <td class="row-actions">
                {editing !== key && (
                  <>
                    <button
                      type="button"
                      class="button-secondary button-small"
                      onClick={() => {
                        setEditing(key);
                        setDraft(typeof value === 'string' ? value : JSON.stringify(value));
                      }}
                    >
                      Edit<span class="visually-hidden"> {key}</span>
                    </button>
                    <button type="button" class="button-secondary button-small" disabled={busy} onClick={() => void run('delete_property/', { $unset: key })}>
                      Delete<span class="visually-hidden"> {key}</span>
                    </button>
                  </>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <form
        class="inline-form add-property"
        aria-label="Add a property"
        onSubmit={(e) => {
          e.preventDefault();
          if (adding.key.trim() === '') return;
          void run('update_property/', { key: adding.key.trim(), value: adding.value }).then((ok) => ok && setAdding({ key: '', value: '' }));
        }}
      >
        <label class="field">
          <span>New property</span>
          <input value={adding.key} onInput={(e) => setAdding({ ...adding, key: (e.target as HTMLInputElement).value })} required />
        </label>
        <label class="field">
          <span>Its value</span>
          <input value={adding.value} onInput={(e) => setAdding({ ...adding, value: (e.target as HTMLInputElement).value })} />
        </label>
        <button type="submit" class="button-secondary" disabled={busy}>
          Add property
        </button>
      </form>
    </section>
  );
}
