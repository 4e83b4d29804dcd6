/**
 * A dashboard: its saved insights as tiles on a 12-column grid (each tile where its layout puts
 * it; one column on a phone), every result from the server's cache while fresh, a date filter
 * that overrides every tile's range, refresh, and removing a tile.
 */
import { useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, query } from '../../api/client';
import { useResource } from '../../api/use-resource';
import { takeEarly } from '../../early';
import { projectApi, useProject } from '../../auth/project';
import { timeAgo } from '../../components/format';
import { PageHeader } from '../../components/shell';
import { EmptyState, ErrorNotice, Loading } from '../../components/status';
import { DATE_RANGES } from '../insights/query-builder';
import { InsightResult } from '../insights/result-views';
import { TileArranger } from './tile-arranger';
import { changed, DEFAULT_SLOT, move, moveTo, resize, type Placed } from './tile-layout';

interface Tile {
  id: number;
  layouts: { sm?: { x: number; y: number; w: number; h: number } };
  last_refresh: string | null;
  is_cached: boolean;
  insight: {
    id: number;
    name: string;
    query: Record<string, any>;
    result: unknown;
    query_status: { error_message: string } | null;
  };
}

interface Dashboard {
  id: number;
  name: string;
  description: string;
  filters: { date_from?: string | null };
  tiles: Tile[];
}

export function DashboardPage() {
  const project = useProject();
  const { params } = useRoute();
  const [refresh, setRefresh] = useState<string | undefined>(undefined);
  const [actionError, setActionError] = useState<Error | null>(null);
  const [arranging, setArranging] = useState(false);
  const [dragged, setDragged] = useState<number | null>(null);
  const path = projectApi(project, `dashboards/${params.dashboardId}/`);
  const dashboard = useResource(
    (signal) => (refresh === undefined ? takeEarly<Dashboard>(path) : undefined) ?? api<Dashboard>(path + query({ refresh }), { signal }),
    [path, refresh],
  );
  const [patched, setPatched] = useState<Dashboard | null>(null);
  const shown = patched && dashboard.data && patched.id === dashboard.data.id && !dashboard.loading ? patched : dashboard.data;

  /** True while a change is being saved: arranging waits, since each move starts from the saved layout. */
  const [saving, setSaving] = useState(false);
  const patch = async (body: Record<string, unknown>) => {
    setActionError(null);
    setSaving(true);
    try {
      setPatched(await api<Dashboard>(path, { method: 'PATCH', body }));
    } catch (e) {
      setActionError(e as Error);
    } finally {
      setSaving(false);
    }
  };

  if (dashboard.error && !shown) return <ErrorNotice error={dashboard.error} retry={dashboard.reload} />;
  if (!shown) return <Loading label="Loading the dashboard…" />;
  // Reading order, as tile-layout.ts counts it (ids break ties).
  const tiles = [...shown.tiles].sort((a, b) => (a.layouts.sm?.y ?? 0) - (b.layouts.sm?.y ?? 0) || (a.layouts.sm?.x ?? 0) - (b.layouts.sm?.x ?? 0) || a.id - b.id);
  const placed: Placed[] = tiles.map((t) => ({ id: t.id, slot: t.layouts.sm ?? DEFAULT_SLOT }));
  /** Saves a new arrangement: only the tiles whose place or size changed. */
  const arrange = (next: Placed[]) => {
    const moved = changed(placed, next);
    if (moved.length > 0) void patch({ tiles: moved.map((t) => ({ id: t.id, layouts: { ...shown.tiles.find((s) => s.id === t.id)?.layouts, sm: t.slot } })) });
  };
  const oldest = tiles.map((t) => t.last_refresh).filter((t): t is string => t !== null).sort()[0];

  return (
    <>
      <PageHeader title={shown.name || `Dashboard ${shown.id}`}>
        <label class="field field-inline">
          <span>Date range</span>
          <select value={shown.filters.date_from ?? ''} onChange={(e) => void patch({ filters: { ...shown.filters, date_from: (e.target as HTMLSelectElement).value || null } })}>
            <option value="">Each insight's own</option>
            {DATE_RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        {tiles.length > 0 && (
          <button type="button" class="button button-secondary" aria-pressed={arranging} onClick={() => setArranging(!arranging)}>
            {arranging ? 'Done arranging' : 'Arrange tiles'}
          </button>
        )}
        <button type="button" class="button button-secondary" onClick={() => (refresh === 'force_blocking' ? dashboard.reload() : setRefresh('force_blocking'))}>
          Refresh
        </button>
      </PageHeader>
      {shown.description && <p class="muted">{shown.description}</p>}
      {oldest && <p class="hint">Computed {timeAgo(oldest)}{tiles.every((t) => t.is_cached) ? ' (from the cache)' : ''}.</p>}
      <ErrorNotice error={actionError} />
      {dashboard.loading && <Loading label="Updating…" />}
      {arranging && <p class="hint">Drag a tile onto another to put it there, or use each tile's buttons (they work with the keyboard). Every change is saved at once.</p>}
      {tiles.length === 0 ? (
        <EmptyState title="This dashboard is empty">
          <p>
            Open an insight, or <a href={`${project.base}/insights/new`}>build a new one</a>, and choose this dashboard under “Add to dashboard”.
          </p>
        </EmptyState>
      ) : (
        <div class={arranging ? 'dashboard-grid arranging' : 'dashboard-grid'}>
          {tiles.map((tile, place) => {
            const slot = tile.layouts.sm ?? DEFAULT_SLOT;
            const source = tile.insight.query.source ?? tile.insight.query;
            return (
              <article
                key={tile.id}
                class={dragged === tile.id ? 'card tile dragging' : 'card tile'}
                aria-label={tile.insight.name}
                style={{ gridColumn: `${slot.x + 1} / span ${slot.w}`, gridRow: `${slot.y + 1} / span ${slot.h}` }}
                draggable={arranging}
                onDragStart={(e) => {
                  setDragged(tile.id);
                  e.dataTransfer?.setData('text/plain', String(tile.id));
                }}
                onDragEnd={() => setDragged(null)}
                onDragOver={(e) => arranging && e.preventDefault()}
                onDrop={(e) => {
                  e.preventDefault();
                  const from = Number(e.dataTransfer?.getData('text/plain'));
                  setDragged(null);
                  if (arranging && !saving && from && from !== tile.id) arrange(moveTo(placed, from, tile.id));
                }}
              >
                <header class="tile-header">
                  <h2>
                    <a href={source.kind === 'HogQLQuery' ? `${project.base}/sql?insight=${tile.insight.id}` : `${project.base}/insights/${tile.insight.id}`}>{tile.insight.name || `Insight ${tile.insight.id}`}</a>
                  </h2>
                  <button type="button" class="button-link" onClick={() => void patch({ tiles: [{ id: tile.id, deleted: true }] })}>
                    Remove<span class="visually-hidden"> {tile.insight.name} from the dashboard</span>
                  </button>
                </header>
                {arranging && (
                  <TileArranger
                    name={tile.insight.name || `Insight ${tile.insight.id}`}
                    slot={slot}
                    place={place}
                    count={tiles.length}
                    busy={saving}
                    onMove={(by) => arrange(move(placed, tile.id, by))}
                    onResize={(change) => arrange(resize(placed, tile.id, change))}
                  />
                )}
                {tile.insight.query_status ? (
                  <p class="notice notice-error" role="alert">
                    {tile.insight.query_status.error_message}
                  </p>
                ) : source.kind === 'HogQLQuery' ? (
                  <HogQLTile result={tile.insight.result as unknown[][]} />
                ) : (
                  <InsightResult query={{ ...source, ...(shown.filters.date_from && { dateRange: { date_from: shown.filters.date_from } }) }} results={tile.insight.result} compact />
                )}
              </article>
            );
          })}
        </div>
      )}
    </>
  );
}

function HogQLTile({ result }: { result: unknown[][] | null }) {
  const rows = result ?? [];
  return (
    <div class="table-scroll">
      <table class="data-table">
        <caption class="visually-hidden">Rows</caption>
        <tbody>
          {rows.slice(0, 20).map((row, i) => (
            <tr key={i}>
              {row.map((cell, j) => (
                <td key={j}>{cell === null ? '' : String(cell)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
