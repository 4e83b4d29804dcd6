/** Writing flag answers to Fastify replies. */
import type { FastifyReply } from 'fastify';
import { asBuffer } from '../../util/bytes.js';
import type { FlagAnswer } from './answer.js';
import { toJson } from './wire/json-text.js';

/** Answers `body` as JSON, with the content type Fastify gives serialised objects. */
export function sendJson(reply: FastifyReply, body: Record<string, unknown>): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(toJson(body));
}

/** A finished answer (answer.ts): status and JSON bytes, possibly from another thread. */
export function sendAnswer(reply: FastifyReply, answer: FlagAnswer): FastifyReply {
  // 'close' comes once the socket has written the bytes or will never write them.
  if (answer.release) reply.raw.once('close', answer.release);
  return reply.code(answer.status).type('application/json; charset=utf-8').send(asBuffer(answer.body));
}
