import { answerFlagRequest, type FlagAnswer, type FlagAnswerDeps, type FlagRoute } from '../remote/answer.js';
import type { FlagHttpRequest } from '../remote/request.js';

/** Whoever answers /decide and /flags POSTs: the main thread, or flag threads. */
export interface FlagAnswerer {
  answer(route: FlagRoute, input: FlagHttpRequest): Promise<FlagAnswer>;
  close(): Promise<void>;
}

export function mainThreadAnswerer(deps: FlagAnswerDeps): FlagAnswerer {
  return { answer: (route, input) => answerFlagRequest(route, input, deps), close: async () => undefined };
}
