/**
 * The `cursor` query parameter of `next`/`previous` links: base64url of
 * `<direction>|<timestamp>|<uuid>`, like DRF's CursorPagination keeps its position opaque.
 * Direction: `n` older than the position, `r` newer, `R` newer including the position.
 */
import type { Cursor } from './types.js';

const SHAPE = /^([nrR])\|(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6})\|([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeCursor(cursor: Cursor): string {
  const direction = cursor.reverse ? (cursor.inclusive ? 'R' : 'r') : 'n';
  return Buffer.from(`${direction}|${cursor.timestamp}|${cursor.uuid}`).toString('base64url');
}

/** The cursor, or null when the text is not one this service wrote. */
export function decodeCursor(text: string): Cursor | null {
  if (text.length > 200 || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const match = SHAPE.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!match) return null;
  return { reverse: match[1] !== 'n', inclusive: match[1] === 'R', timestamp: match[2], uuid: match[3] };
}
