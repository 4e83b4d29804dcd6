/**
 * The built web app (dist/web/, written by `vite build`), read into memory once at start: a few
 * hundred kilobytes, each text file kept gzipped too so it is compressed once, not per request.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface Asset {
  body: Buffer;
  /** Null for files that do not shrink (images, fonts already compressed). */
  gzip: Buffer | null;
  type: string;
  etag: string;
}

/** dist/web, seen from src/webapp/ (tsx) and from dist/webapp/ (the build) alike. */
export const WEB_DIR = fileURLToPath(new URL('../../dist/web/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg', '.json', '.txt']);

/** Every file under `dir` by its URL path (`/index.html`, `/assets/index-1a2b3c.js`); empty when the app was not built. */
export function loadAssets(dir = WEB_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!fs.existsSync(dir)) return assets;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const extension = path.extname(entry.name);
    const body = fs.readFileSync(file);
    const gzip = COMPRESSIBLE.has(extension) ? gzipSync(body, { level: 9 }) : null;
    assets.set(`/${path.relative(dir, file).split(path.sep).join('/')}`, {
      body,
      gzip: gzip && gzip.length < body.length ? gzip : null,
      type: TYPES[extension] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    });
  }
  return assets;
}
