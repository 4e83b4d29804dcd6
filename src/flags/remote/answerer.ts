import { answerFlagRequest, type FlagAnswer, type FlagAnswerDeps, type FlagRoute } from './answer.js';
import type { GeoLookup } from '../../geoip/geoip.js';
import type { FlagHttpRequest } from './request.js';

/** Whoever answers /decide and /flags POSTs: the main thread, or flag threads. */
export interface FlagAnswerer {
  answer(route: FlagRoute, input: FlagHttpRequest): Promise<FlagAnswer>;
  close(): Promise<void>;
}

export function mainThreadAnswerer(deps: FlagAnswerDeps): FlagAnswerer {
  return { answer: (route, input) => answerFlagRequest(route, input, deps), close: async () => undefined };
}

/** What the /decide and /flags routes need. */
export interface FlagRemoteDeps {
  answers: FlagAnswerer;
  /** GeoIP of the client, for flags on `$geoip_*` properties; null when GeoIP is off. */
  geoip: GeoLookup | null;
  bodyLimitBytes: number;
}
