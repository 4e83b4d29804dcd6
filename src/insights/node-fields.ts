/** Small checks the kinds' parsers share; each failure is a 400 whose attr names the field. */
import { validationError } from '../kernel/errors.js';

export type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An integer in [min, max], or `fallback` when absent. */
export function integerField(v: unknown, fallback: number | null, min: number, max: number, attr: string): number | null {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw validationError(`${attr} must be an integer from ${min} to ${max}.`, attr);
  return v;
}

/** One of `allowed`, or `fallback` when absent. */
export function choiceField<T extends string>(v: unknown, allowed: readonly T[], fallback: T, attr: string): T {
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) throw validationError(`${attr} must be one of ${allowed.join(', ')}.`, attr, 'invalid_choice');
  return v as T;
}
