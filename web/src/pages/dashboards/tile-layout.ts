/**
 * Arranging a dashboard's tiles on its 12-column grid: moving a tile earlier or later in reading
 * order and changing its size. Every change packs the tiles again in their order, each at the
 * first free place after the one before it, so tiles never overlap, never leave the grid, and
 * read (left to right, top to bottom) in the order the user chose.
 */

export const GRID_COLUMNS = 12;
/** Widths offered: a quarter, a third, half, two thirds, three quarters, the full width. */
export const WIDTHS = [3, 4, 6, 8, 9, 12];
export const MIN_HEIGHT = 2;
export const MAX_HEIGHT = 12;
/** Where a tile without a layout is drawn (the API's default for a new tile). */
export const DEFAULT_SLOT: Slot = { x: 0, y: 0, w: 6, h: 5 };

export interface Slot {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Placed {
  id: number;
  slot: Slot;
}

/** Reading order: by row, then by column (ids break ties, so the order is total). */
export function readingOrder(tiles: Placed[]): Placed[] {
  return [...tiles].sort((a, b) => a.slot.y - b.slot.y || a.slot.x - b.slot.x || a.id - b.id);
}

const overlaps = (a: Slot, b: Slot) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/**
 * Places the tiles in the given order, keeping their sizes: each goes to the first place, in
 * reading order strictly after the previous tile's, where it overlaps none placed so far.
 */
export function pack(ordered: { id: number; w: number; h: number }[]): Placed[] {
  const placed: Placed[] = [];
  let from = { y: 0, x: -1 };
  for (const tile of ordered) {
    const w = Math.min(Math.max(1, tile.w), GRID_COLUMNS);
    const h = Math.max(1, tile.h);
    let slot: Slot | null = null;
    for (let y = from.y; slot === null; y++) {
      for (let x = y === from.y ? from.x + 1 : 0; x + w <= GRID_COLUMNS; x++) {
        const candidate = { x, y, w, h };
        if (!placed.some((p) => overlaps(p.slot, candidate))) {
          slot = candidate;
          break;
        }
      }
    }
    placed.push({ id: tile.id, slot });
    from = { y: slot.y, x: slot.x };
  }
  return placed;
}

const sizes = (tiles: Placed[]) => tiles.map((t) => ({ id: t.id, w: t.slot.w, h: t.slot.h }));

/** Moves a tile `by` places in reading order (negative: earlier), then packs. */
export function move(tiles: Placed[], id: number, by: number): Placed[] {
  const order = readingOrder(tiles);
  const from = order.findIndex((t) => t.id === id);
  if (from < 0) return pack(sizes(order));
  const to = Math.min(Math.max(0, from + by), order.length - 1);
  const [tile] = order.splice(from, 1);
  order.splice(to, 0, tile!);
  return pack(sizes(order));
}

/** Puts a tile where another one is in reading order (a drop on that tile), then packs. */
export function moveTo(tiles: Placed[], id: number, target: number): Placed[] {
  const order = readingOrder(tiles);
  const to = order.findIndex((t) => t.id === target);
  const from = order.findIndex((t) => t.id === id);
  if (from < 0 || to < 0) return pack(sizes(order));
  return move(tiles, id, to - from);
}

/** The next width up or down the steps of WIDTHS (`step` +1 or -1). */
export function nextWidth(w: number, step: 1 | -1): number {
  if (step > 0) return WIDTHS.find((width) => width > w) ?? GRID_COLUMNS;
  return [...WIDTHS].reverse().find((width) => width < w) ?? WIDTHS[0]!;
}

/** Changes a tile's size (width along WIDTHS, height by rows), then packs in the same order. */
export function resize(tiles: Placed[], id: number, change: { width?: 1 | -1; height?: 1 | -1 }): Placed[] {
  const order = readingOrder(tiles).map((t) => {
    if (t.id !== id) return { id: t.id, w: t.slot.w, h: t.slot.h };
    const w = change.width ? nextWidth(t.slot.w, change.width) : t.slot.w;
    const h = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, t.slot.h + (change.height ?? 0)));
    return { id: t.id, w, h };
  });
  return pack(order);
}

/** The tiles whose slot differs between two arrangements: what to send to the API. */
export function changed(before: Placed[], after: Placed[]): Placed[] {
  const old = new Map(before.map((t) => [t.id, t.slot]));
  return after.filter((t) => {
    const was = old.get(t.id);
    return !was || was.x !== t.slot.x || was.y !== t.slot.y || was.w !== t.slot.w || was.h !== t.slot.h;
  });
}
