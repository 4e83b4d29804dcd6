/** Events per hour over the last 24 hours, for the same filters as the list. */
import { useEffect, useMemo } from 'preact/hooks';
import { api, query } from '../../api/client';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { numberText } from '../../components/format';
import { ErrorNotice } from '../../components/status';
import { TimeBars } from '../../charts/time-bars';
import { eventsQuery, type ActivityFilters } from './filters';

const HOUR = 3600;
const REFRESH_MS = 60_000;

interface HogQLResult {
  results: [string, number][];
}

export function VolumeChart({ filters }: { filters: ActivityFilters }) {
  const project = useProject();
  const params = eventsQuery(filters);
  const volume = useResource(
    (signal) =>
      api<HogQLResult>(projectApi(project, `events/${query({ ...params, select: ['toStartOfHour(timestamp)', 'count()'], after: '-24h', limit: 100 })}`), { signal }),
    [project.id, JSON.stringify(params)],
  );
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === 'visible' && volume.reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [volume.reload]);

  const series = useMemo(() => {
    const counts = new Map((volume.data?.results ?? []).map(([hour, count]) => [Math.floor(Date.parse(hour) / 1000), Number(count)]));
    const last = Math.floor(Date.now() / 1000 / HOUR) * HOUR;
    const times: number[] = [];
    const values: number[] = [];
    for (let t = last - 23 * HOUR; t <= last; t += HOUR) {
      times.push(t);
      values.push(counts.get(t) ?? 0);
    }
    return { times, values, total: values.reduce((a, b) => a + b, 0), busiest: Math.max(...values) };
  }, [volume.data]);

  if (volume.error) return <ErrorNotice error={volume.error} retry={volume.reload} />;
  if (!volume.data) return <div class="chart-placeholder card" aria-hidden="true" />;
  return (
    <figure class="card chart-card">
      <figcaption>
        Events per hour, last 24 hours: {numberText(series.total)} in all
        {series.total > 0 && `, at most ${numberText(series.busiest)} in one hour`}
      </figcaption>
      <TimeBars times={series.times} values={series.values} seriesLabel="Events" />
    </figure>
  );
}
