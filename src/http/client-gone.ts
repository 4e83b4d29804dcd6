import type { FastifyReply } from 'fastify';

/** Aborted when the client goes away before its answer is sent: its queries are stopped then. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}
