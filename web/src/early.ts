/**
 * A dashboard opened directly (a bookmark, a reload) would otherwise wait for the session check,
 * the project list and its page's code before its request leaves (~80 ms here), time in which the
 * server could already be computing its tiles. The entry starts the request and the code at once;
 * the page then takes the answer in flight.
 */
import { api } from './api/client';

const DASHBOARD = /^\/project\/(\d+)\/dashboards\/(\d+)\/?$/;
/** An answer older than this (the visitor signed in first, say) is fetched again. */
const MAX_AGE_MS = 10_000;

const started = new Map<string, { at: number; answer: Promise<unknown> }>();

export function startEarly(pathname: string): void {
  const dashboard = DASHBOARD.exec(pathname);
  if (!dashboard) return;
  void import('./pages/dashboards/dashboard-page');
  const path = `/api/projects/${dashboard[1]}/dashboards/${dashboard[2]}/`;
  const answer = api(path);
  answer.catch(() => undefined); // a signed-out visitor's page never takes it
  started.set(path, { at: performance.now(), answer });
}

/** The answer the entry started for `path`, once and while fresh; a failed one is asked again. */
export function takeEarly<T>(path: string): Promise<T> | undefined {
  const early = started.get(path);
  started.delete(path);
  if (!early || performance.now() - early.at > MAX_AGE_MS) return undefined;
  return (early.answer as Promise<T>).catch(() => api<T>(path));
}
