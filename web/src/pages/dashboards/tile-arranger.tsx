/** A tile's arranging buttons: move it along the reading order, change its width and height. */
import { GRID_COLUMNS, MAX_HEIGHT, MIN_HEIGHT, nextWidth, type Slot } from './tile-layout';

interface Props {
  name: string;
  slot: Slot;
  /** Its place in reading order, and how many tiles there are. */
  place: number;
  count: number;
  /** A change is being saved: the buttons wait for it. */
  busy: boolean;
  onMove: (by: -1 | 1) => void;
  onResize: (change: { width?: 1 | -1; height?: 1 | -1 }) => void;
}

export function TileArranger({ name, slot, place, count, busy, onMove, onResize }: Props) {
  const of = <span class="visually-hidden"> {name}</span>;
  return (
    <div class="tile-arranger" role="group" aria-label={`Arrange ${name}`}>
      <span class="muted" aria-live="polite">
        {slot.w} of {GRID_COLUMNS} columns, {slot.h} rows
      </span>
      <button type="button" class="button-secondary button-small" disabled={busy || place === 0} onClick={() => onMove(-1)}>
        Move earlier{of}
      </button>
      <button type="button" class="button-secondary button-small" disabled={busy || place === count - 1} onClick={() => onMove(1)}>
        Move later{of}
      </button>
      <button type="button" class="button-secondary button-small" disabled={busy || nextWidth(slot.w, -1) >= slot.w} onClick={() => onResize({ width: -1 })}>
        Narrower{of}
      </button>
      <button type="button" class="button-secondary button-small" disabled={busy || slot.w >= GRID_COLUMNS} onClick={() => onResize({ width: 1 })}>
        Wider{of}
      </button>
      <button type="button" class="button-secondary button-small" disabled={busy || slot.h <= MIN_HEIGHT} onClick={() => onResize({ height: -1 })}>
        Shorter{of}
      </button>
      <button type="button" class="button-secondary button-small" disabled={busy || slot.h >= MAX_HEIGHT} onClick={() => onResize({ height: 1 })}>
        Taller{of}
      </button>
    </div>
  );
}
