/**
 * Who is signed in, and their projects. Loaded once at start and again after signing in; any
 * 401 from the API (an expired session) signs the app out.
 */
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useState } from 'preact/hooks';
import { api, ApiError, onSignedOut } from '../api/client';
import type { Me, Page, Project } from '../api/types';

export type AuthState =
  | { status: 'loading' }
  | { status: 'failed'; error: Error }
  | { status: 'signed-out' }
  | { status: 'signed-in'; me: Me; projects: Project[] };

interface Auth {
  state: AuthState;
  /** Reads the user and their projects again (after signing in, or a change to either). */
  refresh: () => Promise<void>;
  signOut: () => Promise<void>;
}

const AuthContext = createContext<Auth | null>(null);

async function loadSignedIn(): Promise<AuthState> {
  try {
    const [me, projects] = await Promise.all([api<Me>('/api/users/@me/'), api<Page<Project>>('/api/projects/?limit=1000')]);
    return { status: 'signed-in', me, projects: projects.results };
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return { status: 'signed-out' };
    return { status: 'failed', error: error as Error };
  }
}

export function AuthProvider({ children }: { children: ComponentChildren }) {
  const [state, setState] = useState<AuthState>({ status: 'loading' });
  const refresh = useCallback(async () => setState(await loadSignedIn()), []);
  const signOut = useCallback(async () => {
    await api('/api/logout', { method: 'POST' }).catch(() => undefined);
    setState({ status: 'signed-out' });
  }, []);

  useEffect(() => {
    void refresh();
    return onSignedOut(() => setState({ status: 'signed-out' }));
  }, [refresh]);

  return <AuthContext.Provider value={{ state, refresh, signOut }}>{children}</AuthContext.Provider>;
}

export function useAuth(): Auth {
  const auth = useContext(AuthContext);
  if (!auth) throw new Error('useAuth outside AuthProvider');
  return auth;
}

/** The signed-in user and projects; only used below the sign-in guard. */
export function useSignedIn(): { me: Me; projects: Project[]; refresh: () => Promise<void>; signOut: () => Promise<void> } {
  const { state, refresh, signOut } = useAuth();
  if (state.status !== 'signed-in') throw new Error('useSignedIn without a session');
  return { me: state.me, projects: state.projects, refresh, signOut };
}
