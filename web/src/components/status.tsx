/** Loading, error and empty states, each said in words (and announced to screen readers). */
import type { ComponentChildren } from 'preact';
import { ApiError } from '../api/client';
import type { Resource } from '../api/use-resource';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p class="status status-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </p>
  );
}

const FIELD_NAMES: Record<string, string> = { key: 'Key', name: 'Description', filters: 'Release conditions', password: 'Password', current_password: 'Current password' };

/** The sentence for an error: the API's own detail, with the field it concerns. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const field = error.attr ? FIELD_NAMES[error.attr] ?? error.attr.replace(/__/g, ' → ') : null;
    return field ? `${field}: ${error.detail}` : error.detail;
  }
  return error instanceof Error ? error.message : String(error);
}

export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  if (!error) return null;
  return (
    <div class="notice notice-error" role="alert">
      <p>{errorText(error)}</p>
      {retry && (
        <button type="button" class="button-secondary" onClick={retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <section class="empty-state" aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export function SuccessNotice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice notice-success" role="status">
      {children}
    </div>
  );
}

/**
 * What an object's page shows until its object has arrived: a spinner while loading, "No such
 * <noun>" with a link back to the list for a 404, else the error with a retry.
 */
export function ObjectPending({ resource, noun, listHref, listName }: { resource: Resource<unknown>; noun: string; listHref: string; listName: string }) {
  if (resource.loading || !resource.error) return <Loading label={`Loading the ${noun}…`} />;
  if (resource.error instanceof ApiError && resource.error.status === 404) {
    return (
      <EmptyState title={`No such ${noun}`}>
        <p>
          This {noun} does not exist in this project, or has been deleted. <a href={listHref}>See the {listName}</a>.
        </p>
      </EmptyState>
    );
  }
  return <ErrorNotice error={resource.error} retry={resource.reload} />;
}
