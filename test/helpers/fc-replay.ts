/**
 * Replays a failed fast-check property: `node --import tsx --import ./test/helpers/fc-replay.ts`
 * with FC_SEED (and FC_PATH) as the failure printed them. It sets fast-check's global settings,
 * which every `fc.assert` of the process reads (an explicit seed in a test's own options wins).
 */
import fc from 'fast-check';

const seed = process.env.FC_SEED;
if (seed) {
  if (!Number.isSafeInteger(Number(seed))) throw new Error(`FC_SEED must be the integer seed a failure printed, not ${seed}`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) });
}
