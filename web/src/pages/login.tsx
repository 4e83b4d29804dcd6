import { useLocation } from 'preact-iso';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError } from '../api/client';
import { useAuth } from '../auth/session';
import { ErrorNotice } from '../components/status';

/** Only paths of this app: `next` must never send the user to another site. */
const safeNext = (next: string | undefined) => (next && next.startsWith('/') && !next.startsWith('//') ? next : '/');

function signInError(error: unknown): Error {
  if (error instanceof ApiError && error.code === 'throttled') {
    const seconds = Number(/(\d+) seconds/.exec(error.detail)?.[1] ?? 60);
    return new Error(`Too many failed sign-ins. Try again in about ${Math.max(1, Math.round(seconds / 60))} minute(s).`);
  }
  return error as Error;
}

export function LoginPage() {
  const { state, refresh } = useAuth();
  const { route, query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  document.title = 'Sign in · Sightline';

  useEffect(() => {
    if (state.status === 'signed-in') route(safeNext(query.next), true);
  }, [state.status, route, query.next]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('/api/login', { method: 'POST', body: { email, password } });
      await refresh();
    } catch (failure) {
      setError(signInError(failure));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="centered-page">
      <form class="card auth-card" onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">Sign in to Sightline</h1>
        <ErrorNotice error={error} />
        <label class="field">
          <span>Email</span>
          <input type="email" name="email" autoComplete="username" required value={email} onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Password</span>
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="button-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p class="hint">
          The first owner's password is printed once when Sightline starts on an empty data folder (or taken from <code>SIGHTLINE_OWNER_PASSWORD</code>). Forgot
          yours? An administrator of the server can run <code>sightline users set-password --email you@example.com</code>.
        </p>
      </form>
    </main>
  );
}
