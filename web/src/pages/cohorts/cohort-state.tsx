/** A cohort's count and calculation state in words, and polling while it calculates. */
import { useEffect } from 'preact/hooks';
import type { Cohort } from '../../api/types';
import { fullDate, numberText, timeAgo } from '../../components/format';

const POLL_MS = 1_000;

export function CohortCount({ cohort }: { cohort: Cohort }) {
  if (cohort.count === null) return <span class="muted">{cohort.is_calculating ? 'Calculating…' : 'Not calculated'}</span>;
  return (
    <>
      {numberText(cohort.count)} {cohort.count === 1 ? 'person' : 'persons'}
    </>
  );
}

/** Calculating, failed, or when it was last calculated. */
export function CohortState({ cohort }: { cohort: Cohort }) {
  if (cohort.is_calculating) {
    return (
      <span class="cohort-state" data-state="calculating">
        <span class="spinner" aria-hidden="true" /> Calculating…
      </span>
    );
  }
  if (cohort.last_error && cohort.errors_calculating > 0) {
    return (
      <span class="cohort-state danger-text" data-state="failed" title={cohort.last_error}>
        Last calculation failed
      </span>
    );
  }
  if (!cohort.last_calculation) return <span class="cohort-state muted" data-state="never">Never</span>;
  return (
    <time class="cohort-state" data-state="calculated" dateTime={cohort.last_calculation} title={fullDate(cohort.last_calculation)}>
      {timeAgo(cohort.last_calculation)}
    </time>
  );
}

/** Calls `reload` every second while any of the cohorts is calculating. */
export function usePollWhileCalculating(cohorts: Cohort[] | undefined, reload: () => void): void {
  const calculating = cohorts?.some((c) => c.is_calculating) ?? false;
  useEffect(() => {
    if (!calculating) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [calculating, reload]);
}
