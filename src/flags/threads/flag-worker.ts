/**
 * A flag thread (flag-threads.ts): answers /decide and /flags from its own connection to the
 * metadata store and its own caches, which the main thread's messages clear.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FlagService } from '../evaluation/index.js';
import { createLogger, type LogLevel } from '../../kernel/logger.js';
import { ChangeStamps } from '../../store/change-stamps.js';
import { openMetaStore } from '../../store/index.js';
import { ByteRing } from '../../util/byte-ring.js';
import { ProjectCache } from '../../tenancy/projects/project-cache.js';
import { answerFlagRequest, type FlagRoute } from '../remote/answer.js';
import type { FlagHttpRequest } from '../remote/request.js';

/** What every flag thread is started with. */
export interface FlagThreadSettings {
  dataDir: string;
  /** The server's PostgreSQL metadata store, when it has one (store/index.ts). */
  postgresUrl?: string;
  maxDecodedBytes: number;
  logLevel: LogLevel;
  /** The main thread's change stamps (persons and groups read here are kept until they change). */
  changeStamps: SharedArrayBuffer;
}

export interface FlagThreadData extends FlagThreadSettings {
  /** This thread's `ByteRing` for the answers' JSON. */
  answerRing: SharedArrayBuffer;
}

export interface FlagThreadRequest {
  id: number;
  route: FlagRoute;
  input: FlagHttpRequest;
}

export type FlagThreadMessage =
  | { type: 'answer'; requests: FlagThreadRequest[] }
  | { type: 'invalidate-flags'; projectId: number }
  | { type: 'invalidate-projects' };

export interface FlagThreadReply {
  id: number;
  status: number;
  /** The JSON, or where it is in the answer ring (so the main thread can reuse its memory). */
  body: Uint8Array | { position: number; length: number };
}

/** What a flag thread posts: once that it is ready to answer, then answers. */
export type FlagThreadOutput = { type: 'ready' } | { type: 'answers'; replies: FlagThreadReply[] };

const data = workerData as FlagThreadData;
const log = createLogger(data.logLevel);
const meta = await openMetaStore({ dataDir: data.dataDir, postgresUrl: data.postgresUrl }, new ChangeStamps(data.changeStamps), { create: false });
const service = new FlagService(meta.flags, log);
const deps = { projects: new ProjectCache(meta.tenancy), service, maxDecodedBytes: data.maxDecodedBytes, log };

const answerRing = new ByteRing(data.answerRing);
const post = (output: FlagThreadOutput) => parentPort!.postMessage(output);

// Answers finished in one event-loop turn go back together.
let outbox: FlagThreadReply[] = [];
function reply(answer: FlagThreadReply): void {
  if (outbox.length === 0) {
    setImmediate(() => {
      post({ type: 'answers', replies: outbox });
      outbox = [];
    });
  }
  outbox.push(answer);
}

async function answer({ id, route, input }: FlagThreadRequest): Promise<void> {
  const { status, body } = await answerFlagRequest(route, input, deps);
  const position = answerRing.write(body);
  reply({ id, status, body: position === null ? body : { position, length: body.length } });
}

parentPort!.on('message', (message: FlagThreadMessage) => {
  if (message.type === 'invalidate-flags') return service.cache.invalidate(message.projectId);
  if (message.type === 'invalidate-projects') return deps.projects.invalidate();
  for (const request of message.requests) void answer(request);
});
// The store is open: requests may come now.
post({ type: 'ready' });
