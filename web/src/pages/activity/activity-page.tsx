/**
 * Live events: the newest page again every few seconds (while the tab is visible), filters,
 * an event's full properties, and the volume of the last 24 hours.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, pathOf, query } from '../../api/client';
import type { EventDefinition, Page, PropertyDefinition, StoredEvent } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { numberText } from '../../components/format';
import { InstallSnippets } from '../../components/install-snippets';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { EventTable } from './event-table';
import { FilterForm } from './filter-form';
import { eventsQuery, hasFilters, NO_FILTERS, type ActivityFilters } from './filters';
import { VolumeChart } from './volume-chart';

const REFRESH_MS = 5_000;
const PAGE_SIZE = 50;

export function ActivityPage() {
  const project = useProject();
  const [filters, setFilters] = useState<ActivityFilters>(NO_FILTERS);
  const [live, setLive] = useState(true);
  const [older, setOlder] = useState<{ events: StoredEvent[]; next: string | null } | null>(null);
  const [olderError, setOlderError] = useState<Error | null>(null);

  const params = eventsQuery(filters);
  const page = useResource((signal) => api<Page<StoredEvent>>(projectApi(project, `events/${query({ ...params, limit: PAGE_SIZE })}`), { signal }), [project.id, JSON.stringify(params)]);
  const definitions = useResource(
    async (signal) => {
      const [events, properties] = await Promise.all([
        api<Page<EventDefinition>>(projectApi(project, 'event_definitions/?limit=1000'), { signal }),
        api<Page<PropertyDefinition>>(projectApi(project, 'property_definitions/?type=event&limit=1000'), { signal }),
      ]);
      return { events: events.results.map((e) => e.name), properties: properties.results.map((p) => p.name) };
    },
    [project.id],
  );

  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') page.reload();
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [live, page.reload]);

  const apply = (next: ActivityFilters) => {
    setFilters(next);
    setOlder(null);
  };

  const loadOlder = async () => {
    const next = older ? older.next : page.data?.next;
    if (!next) return;
    setLive(false);
    setOlderError(null);
    try {
      const more = await api<Page<StoredEvent>>(pathOf(next));
      setOlder({ events: [...(older?.events ?? []), ...more.results], next: more.next });
    } catch (error) {
      setOlderError(error as Error);
    }
  };

  const events = [...(page.data?.results ?? []), ...(older?.events ?? [])];
  const moreLink = older ? older.next : page.data?.next;

  return (
    <>
      <PageHeader title="Activity">
        <label class="toggle">
          <input
            type="checkbox"
            checked={live}
            onChange={(e) => {
              const on = (e.target as HTMLInputElement).checked;
              setLive(on);
              if (on) {
                setOlder(null);
                page.reload();
              }
            }}
          />
          Live (refreshes every {REFRESH_MS / 1000} s)
        </label>
      </PageHeader>
      <FilterForm applied={filters} eventNames={definitions.data?.events ?? []} propertyNames={definitions.data?.properties ?? []} onApply={apply} />
      <VolumeChart filters={filters} />
      <ErrorNotice error={page.error} retry={page.reload} />
      {page.data === undefined && page.loading ? (
        <Loading label="Loading events…" />
      ) : page.data && page.data.count === 0 ? (
        hasFilters(filters) ? (
          <EmptyState title="No events match these filters">
            <p>Change or clear the filters above to see more events.</p>
          </EmptyState>
        ) : (
          <EmptyState title="No events yet">
            <p>Send this project its first events: install an SDK with this project's key and this server's address. New events show up here within seconds.</p>
            <InstallSnippets token={project.api_token} />
          </EmptyState>
        )
      ) : page.data ? (
        <section aria-labelledby="events-heading">
          <h2 id="events-heading" class="section-title">
            {numberText(page.data.count)} event{page.data.count === 1 ? '' : 's'}
            {hasFilters(filters) ? ' match' : ''}
            <span class="muted">, newest first</span>
          </h2>
          <EventTable events={events} />
          <ErrorNotice error={olderError} />
          {moreLink && (
            <button type="button" class="button-secondary load-more" onClick={() => void loadOlder()}>
              Load older events{live ? ' (pauses live updates)' : ''}
            </button>
          )}
        </section>
      ) : null}
    </>
  );
}
