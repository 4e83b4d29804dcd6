import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { EventDefinition } from '../../api/types';
import { projectApi, useProject } from '../../auth/project';
import { fullDate, timeAgo } from '../../components/format';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { useSearchList } from './use-search-list';
import { DataTable } from '../../components/data-table';

export function EventDefinitions() {
  const project = useProject();
  const list = useSearchList<EventDefinition>(projectApi(project, 'event_definitions/'));
  return (
    <section aria-label="Event definitions">
      <label class="field search-field">
        <span>Search events</span>
        <input type="search" value={list.search} onInput={(e) => list.setSearch((e.target as HTMLInputElement).value)} />
      </label>
      <ErrorNotice error={list.first.error} retry={list.reload} />
      {!list.first.data && list.first.loading ? (
        <Loading label="Loading event definitions…" />
      ) : list.items.length === 0 ? (
        <EmptyState title={list.applied ? 'No event matches' : 'No events seen yet'}>
          <p>{list.applied ? `No event name contains “${list.applied}”.` : 'Each event name is listed here the first time it arrives. Send events from an SDK to fill this list.'}</p>
        </EmptyState>
      ) : (
        <DataTable caption="Event definitions" columns={[{ label: 'Event' }, { label: 'Description' }, { label: 'Last seen', wideOnly: true }]}>
          {list.items.map((definition) => (
            <EventRow key={definition.id} definition={definition} />
          ))}
        </DataTable>
      )}
      <ErrorNotice error={list.moreError} />
      {list.next && (
        <button type="button" class="button-secondary load-more" onClick={() => void list.loadMore()}>
          Load more
        </button>
      )}
    </section>
  );
}

function EventRow({ definition }: { definition: EventDefinition }) {
  const project = useProject();
  const [current, setCurrent] = useState(definition);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(definition.description ?? '');
  const [error, setError] = useState<Error | null>(null);

  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const updated = await api<EventDefinition>(projectApi(project, `event_definitions/${current.id}/`), { method: 'PATCH', body: { description: text.trim() || null } });
      setCurrent(updated);
      setEditing(false);
      setError(null);
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <tr>
      <th scope="row" class="mono">
        {current.name}
      </th>
      <td>
        {editing ? (
          <form class="inline-form" onSubmit={save}>
            <label class="field">
              <span class="visually-hidden">Description of {current.name}</span>
              <textarea rows={2} maxLength={4000} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
            </label>
            <button type="submit" class="button-primary button-small">
              Save
            </button>
            <button type="button" class="button-secondary button-small" onClick={() => setEditing(false)}>
              Cancel
            </button>
            <ErrorNotice error={error} />
          </form>
        ) : (
          <div class="inline-value">
            <span class={current.description ? undefined : 'muted'}>{current.description || 'No description'}</span>
            <button type="button" class="button-link" onClick={() => setEditing(true)}>
              Edit<span class="visually-hidden"> the description of {current.name}</span>
            </button>
          </div>
        )}
      </td>
      <td class="wide-only">
        <time dateTime={current.last_seen_at} title={fullDate(current.last_seen_at)}>
          {timeAgo(current.last_seen_at)}
        </time>
      </td>
    </tr>
  );
}
