/**
 * The web app at `/`: its hashed files under /assets/ (cached for a year: a new build has new
 * names), and its page (never cached without revalidation) for the app's own paths only.
 * Every other path answers as before, so API, capture and SDK routes are untouched.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../kernel/errors.js';
import { loadAssets, type Asset } from './assets.js';
import { setSecurityHeaders } from './security-headers.js';

/** The paths the app routes itself (the sign-in pages and everything of a project). */
export const APP_PATHS = ['/', '/login', '/signup', '/project/*'];

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string) {
  setSecurityHeaders(reply);
  reply.header('cache-control', cacheControl);
  reply.header('etag', asset.etag);
  reply.header('vary', 'Accept-Encoding');
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
  reply.type(asset.type);
  const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (asset.gzip && acceptsGzip) {
    reply.header('content-encoding', 'gzip');
    return reply.send(asset.gzip);
  }
  return reply.send(asset.body);
}

export async function registerWebAppRoutes(app: FastifyInstance): Promise<void> {
  const assets = loadAssets();
  const page = assets.get('/index.html');

  app.get('/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const asset = assets.get(request.url.split('?')[0]);
    if (!asset) throw notFound();
    return send(request, reply, asset, IMMUTABLE);
  });

  for (const url of APP_PATHS) {
    app.get(url, { schema: { hide: true } }, async (request, reply) => {
      if (!page) throw notFound('The web app was not built: run `npm run build`.');
      return send(request, reply, page, REVALIDATE);
    });
  }
}
