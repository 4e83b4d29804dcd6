/**
 * Quorum inserts into the replicated mirror tables. ClickHouse before 20.x allows one quorum
 * insert in flight per table across all replicas: a second one, from another Sightline node
 * writing at the same moment, is refused with code 286 before anything is written. Such a
 * refusal is retried after a short pause (the first insert takes milliseconds); newer servers
 * insert in parallel and never refuse.
 */
const QUORUM_BUSY = '286';
/** 18.16's messages lack the `(TYPE)` marker the client parses a code from: the text carries it. */
const QUORUM_BUSY_TEXT = /\bCode: 286\b/;
const RETRY_FOR_MS = 10_000;
const PAUSE_MS = 20;

export async function retryWhileQuorumBusy<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (let pause = PAUSE_MS; ; pause = Math.min(pause * 2, 500)) {
    try {
      return await work();
    } catch (error) {
      if (!isQuorumBusy(error) || Date.now() + pause > deadline) throw error;
      // Jitter so that two refused nodes don't collide again in step.
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    }
  }
}

function isQuorumBusy(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return (error as { code?: unknown }).code === QUORUM_BUSY || QUORUM_BUSY_TEXT.test(error.message);
}
