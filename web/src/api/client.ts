/**
 * Every request the app makes: same-origin JSON with the session cookie, the CSRF token echoed
 * on every state-changing request, and the API's errors turned into words.
 */

const CSRF_COOKIE = 'sightline_csrftoken';

/** An API error: `detail` is the sentence to show, `attr` the field it is about. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null,
  ) {
    super(detail);
  }
}

type SignedOutListener = () => void;
const signedOutListeners = new Set<SignedOutListener>();

/** Called whenever the API says the session is gone (expired, signed out elsewhere). */
export function onSignedOut(listener: SignedOutListener): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

function csrfToken(): string | null {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CSRF_COOKIE) return value.join('=') || null;
  }
  return null;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
}

export async function api<T = unknown>(path: string, options: RequestOptions = {}): Promise<T> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') {
    const token = csrfToken();
    if (token) headers['x-csrftoken'] = token;
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'network', 'Sightline could not be reached. Check your connection and try again.', null);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.ok) return body as T;
  const error = (body ?? {}) as { code?: string; detail?: string; attr?: string | null };
  if (response.status === 401) signedOutListeners.forEach((listener) => listener());
  throw new ApiError(response.status, error.code ?? 'error', error.detail ?? `The server answered ${response.status} ${response.statusText}.`, error.attr ?? null);
}

/** Query string of the defined values (arrays and objects as JSON, as the API takes them). */
export function query(values: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === '') continue;
    params.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** An absolute `next` link of the API as a path on this origin. */
export const pathOf = (link: string) => {
  const url = new URL(link, location.origin);
  return url.pathname + url.search;
};
