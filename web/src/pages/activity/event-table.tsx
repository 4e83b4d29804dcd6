import { useState } from 'preact/hooks';
import type { StoredEvent } from '../../api/types';
import { fullDate, timeAgo, valueText } from '../../components/format';
import { DataTable } from '../../components/data-table';

/** What the event was about, in a few words: the page, the screen or the element text. */
function summary(event: StoredEvent): string {
  const p = event.properties;
  const where = p.$current_url ?? p.$screen_name ?? p.$pathname;
  return typeof where === 'string' ? where : '';
}

export function EventTable({ events }: { events: StoredEvent[] }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <DataTable caption="Events, newest first" class="events-table" columns={[{ label: 'Event' }, { label: 'Person' }, { label: 'URL / screen', wideOnly: true }, { label: 'Time' }, { label: 'Details', hidden: true }]}>
          {events.map((event) => {
            const expanded = open === event.id;
            return [
              <tr key={event.id} class={expanded ? 'row-open' : undefined}>
                <td class="event-name">{event.event}</td>
                <td class="mono">{event.distinct_id}</td>
                <td class="wide-only truncate" title={summary(event)}>
                  {summary(event)}
                </td>
                <td>
                  <time dateTime={event.timestamp} title={fullDate(event.timestamp)}>
                    {timeAgo(event.timestamp)}
                  </time>
                </td>
                <td>
                  <button
                    type="button"
                    class="button-secondary button-small"
                    aria-expanded={expanded}
                    aria-controls={`event-${event.id}`}
                    onClick={() => setOpen(expanded ? null : event.id)}
                  >
                    {expanded ? 'Hide' : 'Properties'}
                    <span class="visually-hidden"> of {event.event} at {fullDate(event.timestamp)}</span>
                  </button>
                </td>
              </tr>,
              expanded && (
                <tr key={`${event.id}-details`} class="details-row">
                  <td colSpan={5} id={`event-${event.id}`}>
                    <EventDetails event={event} />
                  </td>
                </tr>
              ),
            ];
          })}
    </DataTable>
  );
}

function EventDetails({ event }: { event: StoredEvent }) {
  const properties = Object.entries(event.properties).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div class="event-details">
      <dl class="facts">
        <div>
          <dt>UUID</dt>
          <dd class="mono">{event.id}</dd>
        </div>
        <div>
          <dt>Timestamp</dt>
          <dd>{fullDate(event.timestamp)}</dd>
        </div>
        <div>
          <dt>Person</dt>
          <dd>{event.person ? `${event.person.is_identified ? 'Identified' : 'Anonymous'}, ids: ${event.person.distinct_ids.join(', ')}` : 'No person profile'}</dd>
        </div>
      </dl>
      <DataTable caption={`All ${properties.length} properties`} showCaption class="properties-table" columns={[{ label: 'Property' }, { label: 'Value' }]}>
          {properties.map(([key, value]) => (
            <tr key={key}>
              <th scope="row" class="mono">
                {key}
              </th>
              <td class="mono break">{valueText(value)}</td>
            </tr>
          ))}
      </DataTable>
    </div>
  );
}
