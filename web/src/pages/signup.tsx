/** Taking up an invite link: `/signup#<secret>`. */
import { useLocation } from 'preact-iso';
import { useState } from 'preact/hooks';
import { api } from '../api/client';
import { LEVEL_NAMES, type Level } from '../api/types';
import { useResource } from '../api/use-resource';
import { useAuth } from '../auth/session';
import { ErrorNotice, Loading } from '../components/status';

interface Preview {
  target_email: string;
  organization_name: string;
  level: Level;
  existing_user: boolean;
}

export function SignupPage() {
  const token = location.hash.slice(1);
  const { refresh } = useAuth();
  const { route } = useLocation();
  const preview = useResource((signal) => api<Preview>('/api/signup/invite', { method: 'POST', body: { invite_token: token }, signal }), [token]);
  const [firstName, setFirstName] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  document.title = 'Join · Sightline';

  if (!token) {
    return (
      <main class="centered-page">
        <div class="card auth-card">
          <h1>Join Sightline</h1>
          <p>This page needs the invite link an administrator gave you. Open the whole link, including the part after <code>#</code>.</p>
        </div>
      </main>
    );
  }
  if (preview.loading && !preview.data) return <Loading />;
  if (!preview.data) {
    return (
      <main class="centered-page">
        <div class="card auth-card">
          <h1>Join Sightline</h1>
          <ErrorNotice error={preview.error} />
          <p>
            Ask an administrator for a new invite, or <a href="/login">sign in</a> if you already have an account.
          </p>
        </div>
      </main>
    );
  }
  const invite = preview.data;

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(null);
    if (!invite.existing_user && password !== confirm) return setError(new Error('The two passwords are not the same.'));
    setBusy(true);
    try {
      await api('/api/signup', { method: 'POST', body: { invite_token: token, password, ...(invite.existing_user ? {} : { first_name: firstName }) } });
      history.replaceState(null, '', '/signup');
      await refresh();
      route('/', true);
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="centered-page">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="signup-title">
        <h1 id="signup-title">Join {invite.organization_name}</h1>
        <p>
          You were invited as <strong>{invite.target_email}</strong> ({LEVEL_NAMES[invite.level]}).
        </p>
        {invite.existing_user && <p>This e-mail address already has an account: enter its password to join.</p>}
        <ErrorNotice error={error} />
        {!invite.existing_user && (
          <label class="field">
            <span>Your name</span>
            <input name="first_name" autoComplete="given-name" required maxLength={150} value={firstName} onInput={(e) => setFirstName((e.target as HTMLInputElement).value)} />
          </label>
        )}
        <label class="field">
          <span>{invite.existing_user ? 'Password' : 'Choose a password (at least 8 characters)'}</span>
          <input
            type="password"
            name="password"
            autoComplete={invite.existing_user ? 'current-password' : 'new-password'}
            required
            minLength={invite.existing_user ? undefined : 8}
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </label>
        {!invite.existing_user && (
          <label class="field">
            <span>Repeat the password</span>
            <input type="password" name="confirm" autoComplete="new-password" required value={confirm} onInput={(e) => setConfirm((e.target as HTMLInputElement).value)} />
          </label>
        )}
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? 'Joining…' : 'Join'}
        </button>
      </form>
    </main>
  );
}
