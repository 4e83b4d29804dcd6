import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Page, PersonalKey } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { useSignedIn } from '../../auth/session';
import { ShownOnce } from '../../components/copy';
import { fullDate, timeAgo } from '../../components/format';
import { ErrorNotice, Loading, SuccessNotice } from '../../components/status';
import { DataTable } from '../../components/data-table';

export function AccountSettings() {
  return (
    <div class="settings-sections">
      <PasswordForm />
      <PersonalKeys />
    </div>
  );
}

function PasswordForm() {
  const { me, refresh } = useSignedIn();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [done, setDone] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setDone(false);
    if (next !== repeat) return setError(new Error('The two new passwords are not the same.'));
    try {
      await api('/api/users/@me/', { method: 'PATCH', body: { password: next, ...(me.has_password ? { current_password: current } : {}) } });
      setCurrent('');
      setNext('');
      setRepeat('');
      setDone(true);
      await refresh();
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <form class="card" onSubmit={submit} aria-labelledby="password-heading">
      <h2 id="password-heading">Change your password</h2>
      <p class="hint">Signed in as {me.email}. Changing the password signs you out everywhere else.</p>
      {/* Lets password managers tie the new password to the account. */}
      <input type="email" autoComplete="username" value={me.email} hidden readOnly />
      {me.has_password && (
        <label class="field">
          <span>Current password</span>
          <input type="password" autoComplete="current-password" required value={current} onInput={(e) => setCurrent((e.target as HTMLInputElement).value)} />
        </label>
      )}
      <label class="field">
        <span>New password (at least 8 characters)</span>
        <input type="password" autoComplete="new-password" required minLength={8} value={next} onInput={(e) => setNext((e.target as HTMLInputElement).value)} />
      </label>
      <label class="field">
        <span>Repeat the new password</span>
        <input type="password" autoComplete="new-password" required value={repeat} onInput={(e) => setRepeat((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNotice error={error} />
      {done && <SuccessNotice>Your password was changed.</SuccessNotice>}
      <button type="submit" class="button-primary">
        Change password
      </button>
    </form>
  );
}

function PersonalKeys() {
  const keys = useResource((signal) => api<Page<PersonalKey>>('/api/personal_api_keys/?limit=100', { signal }), []);
  const [label, setLabel] = useState('');
  const [created, setCreated] = useState<PersonalKey | null>(null);
  const [error, setError] = useState<Error | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    try {
      setCreated(await api<PersonalKey>('/api/personal_api_keys/', { method: 'POST', body: { label } }));
      setLabel('');
      keys.reload();
    } catch (failure) {
      setError(failure as Error);
    }
  };

  const revoke = async (key: PersonalKey) => {
    if (!confirm(`Revoke the key “${key.label}”? Anything using it stops working at once.`)) return;
    setError(null);
    try {
      await api(`/api/personal_api_keys/${key.id}/`, { method: 'DELETE' });
      if (created?.id === key.id) setCreated(null);
      keys.reload();
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <section class="card" aria-labelledby="keys-heading">
      <h2 id="keys-heading">Personal API keys</h2>
      <p class="hint">
        For the management API (<code>Authorization: Bearer &lt;key&gt;</code>) and for local flag evaluation in posthog-node (<code>personalApiKey</code>). A key can do
        everything you can.
      </p>
      <form class="filter-row" onSubmit={create} aria-label="Create a personal API key">
        <label class="field">
          <span>Label</span>
          <input required maxLength={40} placeholder="e.g. backend flags" value={label} onInput={(e) => setLabel((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="button-primary">
          Create key
        </button>
      </form>
      <ErrorNotice error={error} />
      {created?.value && <ShownOnce title={`New key “${created.label}”.`} value={created.value} />}
      <ErrorNotice error={keys.error} retry={keys.reload} />
      {!keys.data ? (
        <Loading label="Loading keys…" />
      ) : keys.data.results.length === 0 ? (
        <p class="muted">You have no personal API keys.</p>
      ) : (
        <DataTable
          caption="Your personal API keys"
          columns={[{ label: 'Label' }, { label: 'Key' }, { label: 'Created', wideOnly: true }, { label: 'Last used', wideOnly: true }, { label: 'Actions', hidden: true }]}
        >
              {keys.data.results.map((key) => (
                <tr key={key.id}>
                  <td>{key.label}</td>
                  <td class="mono">{key.mask_value}</td>
                  <td class="wide-only">
                    <time dateTime={key.created_at} title={fullDate(key.created_at)}>
                      {timeAgo(key.created_at)}
                    </time>
                  </td>
                  <td class="wide-only">{key.last_used_at ? timeAgo(key.last_used_at) : 'Never'}</td>
                  <td>
                    <button type="button" class="button-danger button-small" onClick={() => void revoke(key)}>
                      Revoke<span class="visually-hidden"> {key.label}</span>
                    </button>
                  </td>
                </tr>
              ))}
        </DataTable>
      )}
    </section>
  );
}
