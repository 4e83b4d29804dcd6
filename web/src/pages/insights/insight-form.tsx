/** The insight builder's controls: each one labelled, each change a new form state. */
import { api, query } from '../../api/client';
import type { Page } from '../../api/types';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';
import { DATE_RANGES, DISPLAYS, INTERVALS, KINDS, MATHS, PROPERTY_MATHS, initialState, series, type BuilderState, type Series } from './query-builder';

interface Props {
  state: BuilderState;
  onChange(state: BuilderState): void;
}

const value = (e: Event) => (e.target as HTMLInputElement | HTMLSelectElement).value;

export function InsightForm({ state, onChange }: Props) {
  const project = useProject();
  const events = useResource((signal) => api<Page<{ name: string }>>(projectApi(project, `event_definitions/${query({ limit: 500 })}`), { signal }), [project.id]);
  const set = (patch: Partial<BuilderState>) => onChange({ ...state, ...patch });
  const setSeries = (index: number, patch: Partial<Series>) => set({ series: state.series.map((s, i) => (i === index ? { ...s, ...patch } : s)) });
  const kind = state.kind;
  const stepWord = kind === 'FunnelsQuery' ? 'Step' : 'Series';
  const multiSeries = kind === 'TrendsQuery' || kind === 'FunnelsQuery' || kind === 'StickinessQuery';

  return (
    <form class="card insight-form" onSubmit={(e) => e.preventDefault()} aria-label="Build the insight">
      <div class="tabs" role="group" aria-label="Kind of insight">
        {KINDS.map((k) => (
          <button key={k.kind} type="button" class="tab" aria-pressed={kind === k.kind} onClick={() => kind !== k.kind && onChange({ ...initialState(k.kind), dateFrom: state.dateFrom })}>
            {k.label}
          </button>
        ))}
      </div>
      <datalist id="event-names">
        {events.data?.results.map((e) => <option key={e.name} value={e.name} />)}
      </datalist>

      {kind === 'RetentionQuery' ? (
        <>
          <label class="field">
            <span>Cohort: persons who did for the first time</span>
            <input list="event-names" value={state.series[0]?.event ?? ''} onInput={(e) => setSeries(0, { event: value(e) })} />
          </label>
          <label class="field">
            <span>Came back to do</span>
            <input list="event-names" value={state.series[1]?.event ?? ''} onInput={(e) => setSeries(1, { event: value(e) })} />
          </label>
          <label class="field">
            <span>Period</span>
            <select value={state.retentionPeriod} onChange={(e) => set({ retentionPeriod: value(e) as BuilderState['retentionPeriod'] })}>
              <option value="Day">Day</option>
              <option value="Week">Week</option>
              <option value="Month">Month</option>
            </select>
          </label>
        </>
      ) : kind === 'PathsQuery' ? (
        <label class="field">
          <span>Paths starting at (a page URL or event; empty: anywhere)</span>
          <input value={state.pathStart} onInput={(e) => set({ pathStart: value(e) })} />
        </label>
      ) : (
        <fieldset class="series-list">
          <legend>{kind === 'FunnelsQuery' ? 'Steps' : 'Events'}</legend>
          {state.series.map((s, i) => (
            <div key={i} class="series-row">
              <label class="field">
                <span>
                  {stepWord} {i + 1}: event (empty: all events)
                </span>
                <input list="event-names" value={s.event} onInput={(e) => setSeries(i, { event: value(e) })} />
              </label>
              {kind === 'TrendsQuery' && (
                <label class="field">
                  <span>Counted as</span>
                  <select value={s.math} onChange={(e) => setSeries(i, { math: value(e) })}>
                    {MATHS.map((m) => (
                      <option key={m.value} value={m.value}>
                        {m.label}
                      </option>
                    ))}
                  </select>
                </label>
              )}
              {kind === 'TrendsQuery' && PROPERTY_MATHS.has(s.math) && (
                <label class="field">
                  <span>Property</span>
                  <input value={s.mathProperty} onInput={(e) => setSeries(i, { mathProperty: value(e) })} />
                </label>
              )}
              {multiSeries && state.series.length > (kind === 'FunnelsQuery' ? 2 : 1) && (
                <button type="button" class="button-link" onClick={() => set({ series: state.series.filter((_, j) => j !== i) })}>
                  Remove {stepWord.toLowerCase()} {i + 1}
                </button>
              )}
            </div>
          ))}
          {multiSeries && state.series.length < 10 && (
            <button type="button" class="button button-secondary button-small" onClick={() => set({ series: [...state.series, series('')] })}>
              Add {kind === 'FunnelsQuery' ? 'step' : 'series'}
            </button>
          )}
        </fieldset>
      )}

      <div class="field-row">
        <label class="field">
          <span>Date range</span>
          <select value={state.dateFrom} onChange={(e) => set({ dateFrom: value(e) })}>
            {DATE_RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {(kind === 'TrendsQuery' || kind === 'LifecycleQuery' || kind === 'StickinessQuery') && (
          <label class="field">
            <span>Interval</span>
            <select value={state.interval} onChange={(e) => set({ interval: value(e) as BuilderState['interval'] })}>
              {INTERVALS.map((i) => (
                <option key={i} value={i}>
                  {i}
                </option>
              ))}
            </select>
          </label>
        )}
        {kind === 'TrendsQuery' && (
          <label class="field">
            <span>Show as</span>
            <select value={state.display} onChange={(e) => set({ display: value(e) as BuilderState['display'] })}>
              {DISPLAYS.map((d) => (
                <option key={d.value} value={d.value}>
                  {d.label}
                </option>
              ))}
            </select>
          </label>
        )}
        {kind === 'FunnelsQuery' && (
          <label class="field">
            <span>Conversion window (days)</span>
            <input type="number" min={1} max={365} value={state.windowDays} onInput={(e) => set({ windowDays: Math.max(1, Number(value(e)) || 1) })} />
          </label>
        )}
      </div>

      {(kind === 'TrendsQuery' || kind === 'FunnelsQuery') && (
        <div class="field-row">
          <label class="field">
            <span>Break down by property</span>
            <input value={state.breakdown} placeholder="$browser" onInput={(e) => set({ breakdown: value(e) })} />
          </label>
          <label class="field">
            <span>Property of</span>
            <select value={state.breakdownType} onChange={(e) => set({ breakdownType: value(e) as BuilderState['breakdownType'] })}>
              <option value="event">the event</option>
              <option value="person">the person</option>
            </select>
          </label>
        </div>
      )}
      {(kind === 'TrendsQuery' || kind === 'StickinessQuery') && (
        <label class="toggle">
          <input type="checkbox" checked={state.compare} onChange={(e) => set({ compare: (e.target as HTMLInputElement).checked })} />
          Compare to the previous period
        </label>
      )}
    </form>
  );
}
