/**
 * Deleting a person (optionally with their events): asked for in a confirmation dialog, then the
 * deletion's status is polled until every store is done with it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, pathOf } from '../../api/client';
import type { Person, PersonDeletion } from '../../api/types';
import { projectApi, useProject } from '../../auth/project';
import { ErrorNotice, SuccessNotice } from '../../components/status';
import { personLabel } from './person-name';

const POLL_MS = 1_000;

export function PersonDeletionControls({ person, deletion, onDeleted }: { person: Person; deletion: PersonDeletion | null; onDeleted: (d: PersonDeletion) => void }) {
  const project = useProject();
  const dialog = useRef<HTMLDialogElement>(null);
  const [withEvents, setWithEvents] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  const ask = (events: boolean) => {
    setWithEvents(events);
    setError(null);
    dialog.current?.showModal();
  };
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      const started = await api<PersonDeletion>(projectApi(project, `persons/${person.id}/?delete_events=${withEvents}`), { method: 'DELETE' });
      dialog.current?.close();
      onDeleted(started);
    } catch (failure) {
      setError(failure as Error);
    } finally {
      setBusy(false);
    }
  };

  if (deletion) return null;
  return (
    <>
      <button type="button" class="button-danger" onClick={() => ask(false)}>
        Delete person
      </button>
      <button type="button" class="button-danger" onClick={() => ask(true)}>
        Delete person and events
      </button>
      <dialog ref={dialog} class="confirm-dialog" aria-labelledby="delete-heading" aria-describedby="delete-what">
        <h2 id="delete-heading">{withEvents ? 'Delete this person and all their events?' : 'Delete this person?'}</h2>
        <p id="delete-what">
          {personLabel(person)}, their {person.distinct_ids.length} distinct ID{person.distinct_ids.length === 1 ? '' : 's'} and properties are removed.{' '}
          {withEvents
            ? 'Every event they sent is deleted too, from every insight, export and query. This cannot be undone.'
            : 'Their events stay, under their distinct IDs, without a person. This cannot be undone.'}{' '}
          A later event from one of these distinct IDs creates a new person.
        </p>
        <ErrorNotice error={error} />
        <div class="form-actions">
          <button type="button" class="button-danger" disabled={busy} onClick={() => void confirm()}>
            {busy ? 'Deleting…' : withEvents ? 'Yes, delete person and events' : 'Yes, delete person'}
          </button>
          <button type="button" class="button-secondary" onClick={() => dialog.current?.close()}>
            Cancel
          </button>
        </div>
      </dialog>
    </>
  );
}

/** The status of a deletion in words, polled until it is finished. */
export function DeletionStatus({ deletion: initial }: { deletion: PersonDeletion }) {
  const project = useProject();
  const [deletion, setDeletion] = useState(initial);
  const [error, setError] = useState<Error | null>(null);

  useEffect(() => {
    if (deletion.status !== 'pending') return;
    const timer = setTimeout(() => {
      api<PersonDeletion>(pathOf(deletion.status_url)).then(
        (next) => {
          setError(null);
          setDeletion(next);
        },
        (failure: Error) => {
          setError(failure);
          // Keep asking: the status is all the page still has to show.
          setDeletion({ ...deletion });
        },
      );
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [deletion]);

  const what = deletion.delete_events ? 'The person and their events' : 'The person';
  return (
    <div class="deletion-status" data-status={deletion.status}>
      {deletion.status === 'pending' ? (
        <p class="status status-loading" role="status" aria-live="polite">
          <span class="spinner" aria-hidden="true" />
          Deleting… The person is gone from the persons list and from flags; {deletion.delete_events ? 'their events are being deleted from the event store.' : 'the event store is being updated.'}
        </p>
      ) : (
        <SuccessNotice>
          <p>
            {what} {deletion.delete_events ? 'are' : 'is'} deleted: nothing of {deletion.delete_events ? 'them' : 'the person'} shows in queries any more
            {deletion.status === 'purged' ? ', and the event file has been rewritten without them.' : '. The event file is rewritten without the deleted rows later (compaction).'}
          </p>
          <p>
            <a href={`${project.base}/persons`}>Back to persons</a>
          </p>
        </SuccessNotice>
      )}
      <ErrorNotice error={error} />
    </div>
  );
}
