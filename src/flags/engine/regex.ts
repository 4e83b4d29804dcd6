/**
 * `regex` / `not_regex` patterns, matched in bounded time.
 *
 * A pattern is parsed and compiled by re2js (RE2 syntax, the same dialect DuckDB uses for the
 * events API's regex filters), and run here by a Thompson NFA simulation that counts its work:
 * each instruction a thread visits is one step. The work of one match is at most text length ×
 * program size, and a `StepBudget` caps it outright, so a hostile pattern costs a bounded,
 * small amount of time instead of stalling a flag thread (a JS RegExp backtracks: `^(a+)+$` on
 * thirty `a`s and a `!` took over a minute). re2js's own matcher is linear too, but its constant
 * has no bound we control (a lazy DFA that keeps resetting its cache did ~1 µs per text
 * character and instruction), which is why only its compiler is used.
 *
 * The simulation reads re2js's compiled program (`RE2.prog`: instructions with `op`, `out`,
 * `arg`, `runes`). That is not part of re2js's documented surface, so the version is pinned and a
 * unit test cross-checks every answer against re2js's own matcher.
 */
import { RE2JS } from 're2js';

/** Work allowed to one `regex` condition, and to all of one request's regex conditions together. */
export const STEPS_PER_MATCH = 100_000;
export const STEPS_PER_EVALUATION = 500_000;

/** Raised when a match would need more work than its budget allows. */
export class RegexLimitError extends Error {
  constructor() {
    super('regex match exceeded its step limit');
    this.name = 'RegexLimitError';
  }
}

/** Steps left to a group of matches (one flag evaluation). */
export class StepBudget {
  constructor(public remaining: number = STEPS_PER_EVALUATION) {}
}

// re2js's instruction codes and empty-width flags (RE2's own numbering).
const ALT = 1;
const ALT_MATCH = 2;
const CAPTURE = 3;
const EMPTY_WIDTH = 4;
const FAIL = 5;
const MATCH = 6;
const NOP = 7;
const RUNE = 8;
const RUNE1 = 9;
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;

const BEGIN_LINE = 1;
const END_LINE = 2;
const BEGIN_TEXT = 4;
const END_TEXT = 8;
const WORD_BOUNDARY = 16;
const NO_WORD_BOUNDARY = 32;

interface Instruction {
  op: number;
  out: number;
  arg: number;
  runes: Int32Array;
  matchRune(rune: number): boolean;
}

interface Program {
  inst: Instruction[];
  start: number;
}

/** A list of program counters without duplicates (a sparse set: O(1) add, test and clear). */
class ThreadList {
  readonly dense: Int32Array;
  private readonly sparse: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.dense = new Int32Array(capacity);
    this.sparse = new Int32Array(capacity);
  }

  has(pc: number): boolean {
    const at = this.sparse[pc];
    return at < this.size && this.dense[at] === pc;
  }

  add(pc: number): void {
    this.sparse[pc] = this.size;
    this.dense[this.size++] = pc;
  }
}

function isWordRune(rune: number): boolean {
  return (
    (rune >= 0x30 && rune <= 0x39) || (rune >= 0x41 && rune <= 0x5a) || (rune >= 0x61 && rune <= 0x7a) || rune === 0x5f
  );
}

/** The empty-width assertions that hold between `before` and `after` (-1 = an end of the text). */
function context(before: number, after: number): number {
  let flags = 0;
  if (before < 0) flags |= BEGIN_TEXT | BEGIN_LINE;
  else if (before === 10) flags |= BEGIN_LINE;
  if (after < 0) flags |= END_TEXT | END_LINE;
  else if (after === 10) flags |= END_LINE;
  flags |= isWordRune(before) === isWordRune(after) ? NO_WORD_BOUNDARY : WORD_BOUNDARY;
  return flags;
}

/** A compiled pattern that answers "does it match anywhere in the text" within a step budget. */
export class BoundedRegex {
  private readonly inst: Instruction[];
  private readonly start: number;
  /** The pattern can only match at the start of the text (`^…` without `(?m)`). */
  private readonly anchored: boolean;
  /** The pattern can never match (re2js marks such programs with a start condition of -1). */
  private readonly impossible: boolean;
  // Scratch space, reused: matching is synchronous and never re-entered.
  private readonly stack: Int32Array;
  private readonly lists: [ThreadList, ThreadList];
  private steps = 0;

  private constructor(program: Program, startCondition: number) {
    this.inst = program.inst;
    this.start = program.start;
    this.impossible = startCondition === -1;
    this.anchored = !this.impossible && (startCondition & BEGIN_TEXT) !== 0;
    this.stack = new Int32Array(program.inst.length * 2 + 2);
    this.lists = [new ThreadList(program.inst.length), new ThreadList(program.inst.length)];
  }

  /** Compiles `pattern` (RE2 syntax); throws on a syntax error. */
  static compile(pattern: string): BoundedRegex {
    const re2 = RE2JS.compile(pattern).re2() as unknown as { prog: Program; cond: number };
    return new BoundedRegex(re2.prog, re2.cond);
  }

  /** Program size (instructions), re2js's measure of a pattern's cost. */
  get size(): number {
    return this.inst.length;
  }

  /** Adds `pc` to `list` with everything reachable from it without reading a character. */
  private follow(list: ThreadList, pc: number, flags: number): void {
    const inst = this.inst;
    const stack = this.stack;
    let top = 0;
    stack[top++] = pc;
    while (top > 0) {
      const at = stack[--top];
      if (list.has(at)) continue;
      list.add(at);
      this.steps++;
      const instruction = inst[at];
      switch (instruction.op) {
        case ALT:
        case ALT_MATCH:
          stack[top++] = instruction.arg;
          stack[top++] = instruction.out;
          break;
        case EMPTY_WIDTH:
          if ((instruction.arg & ~flags) === 0) stack[top++] = instruction.out;
          break;
        case NOP:
        case CAPTURE:
          stack[top++] = instruction.out;
          break;
        case FAIL:
        case MATCH:
        case RUNE:
        case RUNE1:
        case RUNE_ANY:
        case RUNE_ANY_NOT_NL:
          break;
        default:
          // Lookbehind instructions: only compiled when asked for, which this module never does.
          throw new Error(`unsupported regex instruction ${instruction.op}`);
      }
    }
  }

  /**
   * Does the pattern match a part of `text`? Spends at most `limit` steps, taken from `budget`;
   * throws `RegexLimitError` when it would need more.
   */
  test(text: string, budget: StepBudget, limit = STEPS_PER_MATCH): boolean {
    if (this.impossible) return false;
    const allowed = Math.min(limit, budget.remaining);
    this.steps = 0;
    let [current, next] = this.lists;
    current.size = 0;
    next.size = 0;
    const inst = this.inst;

    try {
      let position = 0;
      let before = -1;
      let rune = text.length > 0 ? text.codePointAt(0)! : -1;
      for (;;) {
        const width = rune > 0xffff ? 2 : 1;
        const after = rune < 0 || position + width >= text.length ? -1 : text.codePointAt(position + width)!;
        if (!this.anchored || position === 0) this.follow(current, this.start, context(before, rune));
        else if (current.size === 0) break;
        if (this.steps > allowed) throw new RegexLimitError();

        const flagsAfter = context(rune, after);
        for (let i = 0; i < current.size; i++) {
          const instruction = inst[current.dense[i]];
          this.steps++;
          let advance = false;
          switch (instruction.op) {
            case MATCH:
              return true;
            case RUNE:
              advance = rune >= 0 && instruction.matchRune(rune);
              break;
            case RUNE1:
              advance = rune === instruction.runes[0];
              break;
            case RUNE_ANY:
              advance = rune >= 0;
              break;
            case RUNE_ANY_NOT_NL:
              advance = rune >= 0 && rune !== 10;
              break;
          }
          if (advance) this.follow(next, instruction.out, flagsAfter);
        }
        if (this.steps > allowed) throw new RegexLimitError();
        if (rune < 0) return false;

        [current, next] = [next, current];
        next.size = 0;
        position += width;
        before = rune;
        rune = after;
      }
      return false;
    } finally {
      budget.remaining -= Math.min(this.steps, allowed);
    }
  }
}

const MAX_CACHED = 1000;
const cache = new Map<string, BoundedRegex | null>();

/** The compiled pattern, or null when it is not a valid RE2 pattern. */
export function compileFlagRegex(pattern: string): BoundedRegex | null {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  let compiled: BoundedRegex | null;
  try {
    compiled = BoundedRegex.compile(pattern);
  } catch {
    compiled = null;
  }
  // Patterns come from stored flags, so the set is small; a full reset keeps it bounded.
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}
