import type { FastifyRequest } from 'fastify';

/**
 * This server's address as its clients see it, for links it hands out: SIGHTLINE_PUBLIC_URL
 * when set, else the request's protocol and host (X-Forwarded-* only when trusted).
 */
export const publicBase = (request: FastifyRequest, publicUrl: string | null): string => publicUrl ?? `${request.protocol}://${request.host}`;
