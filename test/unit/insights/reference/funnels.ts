/**
 * The simplest funnel computation we could write: plain loops over an in-memory event list,
 * following query-api.md §1.8.2 as docs/insights.md states Sightline's rules. The property
 * tests compare the API's numbers with it.
 */
import { bucketWallOf, type ResolvedDateRange } from '../../../../src/insights/time/index.js';

export interface RefEvent {
  uuid: string;
  event: string;
  /** The person after merges. */
  person: string;
  ts: number;
  properties: Record<string, unknown>;
}

export interface RefFunnel {
  /** `optional`: the step may be skipped (ordered funnels). */
  steps: Array<{ event: string; where?: (e: RefEvent) => boolean; optional?: boolean }>;
  order: 'ordered' | 'strict' | 'unordered';
  windowMs: number;
  exclusions: Array<{ event: string; fromStep: number; toStep: number }>;
  range: ResolvedDateRange;
  /** The breakdown value of an event (a property's text, a HogQL expression's), first touch; null or undefined is "". */
  breakdown?: { value: (e: RefEvent) => unknown; limit: number };
}

interface Attempt {
  entry: number;
  /**
   * Step times up to the furthest required step reached, by step index (an optional step not
   * done is null); its length is what the step counts see.
   */
  times: Array<number | null>;
  /** Optional steps done, and when. */
  done: Map<number, number>;
  /** The furthest step got to (a done optional step counts). */
  far: number;
  excluded: boolean;
}

const matchesStep = (f: RefFunnel, k: number, e: RefEvent) => e.event === f.steps[k].event && (f.steps[k].where?.(e) ?? true);

function attemptsOf(f: RefFunnel, events: RefEvent[]): Attempt[] {
  const n = f.steps.length;
  const out: Attempt[] = [];
  const firstExclusionAfter = (t: number, which: number[]) => {
    let best: number | null = null;
    for (const e of events) if (e.ts > t && which.some((i) => e.event === f.exclusions[i].event) && (best === null || e.ts < best)) best = e.ts;
    return best;
  };
  const exclusionHit = (times: number[], entry: number, fromStep: number, toStep: number, which: number[]) => {
    if (times.length <= fromStep) return false;
    const x = firstExclusionAfter(times[fromStep], which);
    if (x === null) return false;
    return times.length > toStep ? x < times[toStep] : x - entry <= f.windowMs;
  };
  const firstAfter = (k: number, t: number, strictly: boolean) => {
    let next: number | null = null;
    for (const e of events) if ((strictly ? e.ts > t : e.ts >= t) && matchesStep(f, k, e) && (next === null || e.ts < next)) next = e.ts;
    return next;
  };
  const excludedBy = (times: number[], entry: number) => f.exclusions.some((x, i) => exclusionHit(times, entry, x.fromStep, x.toStep, [i]));

  events.forEach((start, i) => {
    if (f.order === 'ordered') {
      if (!matchesStep(f, 0, start)) return;
      // Required steps chain (each the first event at or after the required one before it);
      // an optional step is done by its first event after that required step, within the
      // window and no later than the next required step's event when that was reached.
      const required = f.steps.flatMap((s, k) => (s.optional ? [] : [k]));
      const times: Array<number | null> = [start.ts];
      let last = 0;
      for (const k of required.slice(1)) {
        const same = f.steps[k].event === f.steps[last].event;
        const next = firstAfter(k, times[last]!, same);
        if (next === null || next - start.ts > f.windowMs) break;
        for (let m = last + 1; m < k; m++) times.push(null);
        times.push(next);
        last = k;
      }
      const done = new Map<number, number>();
      f.steps.forEach((s, m) => {
        if (!s.optional) return;
        let before = m - 1;
        while (f.steps[before].optional) before--;
        if (times.length <= before) return;
        const at = firstAfter(m, times[before]!, f.steps[m].event === f.steps[before].event);
        let after = m + 1;
        while (after < n && f.steps[after].optional) after++;
        const nextTime = after < n && times.length > after ? times[after]! : null;
        if (at !== null && at - start.ts <= f.windowMs && (nextTime === null || at <= nextTime)) done.set(m, at);
      });
      for (const [m, at] of done) if (m < times.length) times[m] = at;
      const far = Math.max(times.length - 1, ...done.keys());
      out.push({ entry: start.ts, times, done, far, excluded: excludedBy(times as number[], start.ts) });
    } else if (f.order === 'strict') {
      if (!matchesStep(f, 0, start)) return;
      const times = [start.ts];
      for (let k = 1; k < n; k++) {
        const e = events[i + k];
        if (!e || !matchesStep(f, k, e) || e.ts - start.ts > f.windowMs) break;
        times.push(e.ts);
      }
      out.push({ entry: start.ts, times, done: new Map(), far: times.length - 1, excluded: excludedBy(times, start.ts) });
    } else {
      if (!f.steps.some((_, m) => matchesStep(f, m, start))) return;
      const times: number[] = [];
      for (let m = 0; m < n; m++) {
        let first: number | null = null;
        for (const e of events) if (e.ts >= start.ts && matchesStep(f, m, e) && (first === null || e.ts < first)) first = e.ts;
        if (first !== null && first - start.ts <= f.windowMs) times.push(first);
      }
      times.sort((a, b) => a - b);
      const all = f.exclusions.map((_, x) => x);
      out.push({ entry: start.ts, times, done: new Map(), far: times.length - 1, excluded: all.length > 0 && exclusionHit(times, start.ts, 0, n - 1, all) });
    }
  });
  return out;
}

/** The counted attempt: furthest step, earliest entry among equals. */
function best(attempts: Attempt[]): Attempt | null {
  let chosen: Attempt | null = null;
  for (const a of attempts) if (!chosen || a.far > chosen.far || (a.far === chosen.far && a.entry < chosen.entry)) chosen = a;
  return chosen;
}

/** Each person's events in range, ordered by time then uuid (the engine's tie order). */
function byPerson(f: RefFunnel, events: RefEvent[]): Map<string, RefEvent[]> {
  const persons = new Map<string, RefEvent[]>();
  for (const e of events) {
    if (e.ts < f.range.readFrom || e.ts >= f.range.to) continue;
    if (f.order !== 'strict' && !f.steps.some((s) => s.event === e.event) && !f.exclusions.some((x) => x.event === e.event)) continue;
    persons.set(e.person, [...(persons.get(e.person) ?? []), e]);
  }
  for (const list of persons.values()) list.sort((a, b) => a.ts - b.ts || (a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  return persons;
}

function firstTouch(f: RefFunnel, events: RefEvent[]): string {
  const entry = events.find((e) => (f.order === 'unordered' ? f.steps.some((_, m) => matchesStep(f, m, e)) : matchesStep(f, 0, e)));
  const value = entry ? f.breakdown!.value(entry) : undefined;
  return value === undefined || value === null ? '' : String(value);
}

export interface RefStep {
  count: number;
  average: number | null;
  median: number | null;
}

const median = (xs: number[]) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

function stepsOf(f: RefFunnel, chosen: Attempt[]): RefStep[] {
  return f.steps.map((step, k) => {
    if (step.optional) return { count: chosen.filter((a) => a.done.has(k)).length, average: null, median: null };
    let before = k - 1;
    while (before > 0 && f.steps[before].optional) before--;
    const reached = chosen.filter((a) => a.times.length > k);
    const durations = k === 0 ? [] : reached.map((a) => (a.times[k]! - a.times[before]!) / 1000);
    return { count: reached.length, average: k === 0 ? null : mean(durations), median: k === 0 ? null : median(durations) };
  });
}

/** Steps view: one funnel, or one per breakdown value (keyed by the value; "Other" merged). */
export function referenceSteps(f: RefFunnel, events: RefEvent[]): Map<string, RefStep[]> {
  const chosenBy = new Map<string, Attempt[]>();
  for (const list of byPerson(f, events).values()) {
    const chosen = best(attemptsOf(f, list));
    if (!chosen || chosen.excluded) continue;
    const key = f.breakdown ? firstTouch(f, list) : '';
    chosenBy.set(key, [...(chosenBy.get(key) ?? []), chosen]);
  }
  if (!f.breakdown) return new Map([['', stepsOf(f, chosenBy.get('') ?? [])]]);
  const ranked = [...chosenBy.entries()].sort(([a, x], [b, y]) => y.length - x.length || (a < b ? -1 : a > b ? 1 : 0));
  const merged = new Map<string, Attempt[]>();
  ranked.forEach(([value, list], i) => {
    const key = i < f.breakdown!.limit ? value : 'Other';
    merged.set(key, [...(merged.get(key) ?? []), ...list]);
  });
  return new Map([...merged].map(([key, list]) => [key, stepsOf(f, list)]));
}

/** Trends view: conversion % per entry period (wall start of the bucket → percentage). */
export function referenceTrends(f: RefFunnel, events: RefEvent[], fromStep: number, toStep: number): Map<number, number> {
  const tallies = new Map<number, { entered: number; converted: number }>();
  for (const list of byPerson(f, events).values()) {
    const perPeriod = new Map<number, Attempt[]>();
    for (const a of attemptsOf(f, list)) {
      const period = bucketWallOf(f.range, a.entry);
      perPeriod.set(period, [...(perPeriod.get(period) ?? []), a]);
    }
    for (const [period, attempts] of perPeriod) {
      const chosen = best(attempts)!;
      if (chosen.excluded) continue;
      const t = tallies.get(period) ?? { entered: 0, converted: 0 };
      if (chosen.times.length > fromStep) t.entered++;
      if (chosen.times.length > toStep) t.converted++;
      tallies.set(period, t);
    }
  }
  return new Map([...tallies].map(([period, t]) => [period, t.entered === 0 ? 0 : Math.round((t.converted / t.entered) * 10_000) / 100]));
}

/** Time-to-convert view: the sample's average and PostHog's bins. */
export function referenceTimeToConvert(f: RefFunnel, events: RefEvent[], fromStep: number, toStep: number, binCount?: number) {
  const values: number[] = [];
  for (const list of byPerson(f, events).values()) {
    const chosen = best(attemptsOf(f, list));
    if (chosen && !chosen.excluded && chosen.times.length > toStep) values.push((chosen.times[toStep]! - chosen.times[fromStep]!) / 1000);
  }
  if (values.length === 0) return { average_conversion_time: null, bins: [] as number[][] };
  const lo = Math.floor(Math.min(...values));
  const bins = binCount ?? Math.min(60, Math.max(1, Math.ceil(Math.cbrt(values.length))));
  const width = Math.ceil((Math.max(...values) - lo) / bins) || 60;
  const out = Array.from({ length: bins + 1 }, (_, i) => [lo + i * width, 0]);
  for (const v of values) out[Math.min(bins, Math.floor((v - lo) / width))][1]++;
  return { average_conversion_time: Math.round(mean(values)! * 100) / 100, bins: out };
}
