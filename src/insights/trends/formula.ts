/**
 * Trends formulas (`A/B*100`): letters name series by position, with numbers, + - * / and
 * parentheses. A tiny recursive-descent parser builds a tree that is evaluated per bucket —
 * nothing the user writes is ever run as code. Division by zero, and any other result that is
 * not a finite number, gives 0, as PostHog shows it.
 */
export type Formula =
  | { kind: 'num'; value: number }
  | { kind: 'series'; index: number }
  | { kind: 'neg'; arg: Formula }
  | { kind: 'bin'; op: '+' | '-' | '*' | '/'; left: Formula; right: Formula };

export class FormulaError extends Error {}

const MAX_LENGTH = 1_000;
const MAX_DEPTH = 50;

export function parseFormula(text: string): Formula {
  if (text.length > MAX_LENGTH) throw new FormulaError(`The formula is too long (limit ${MAX_LENGTH} characters).`);
  const tokens = text.toUpperCase().match(/\s+|\d+(?:\.\d+)?|\.\d+|[A-Z]|[-+*/()]|./g) ?? [];
  const list = tokens.filter((t) => !/^\s+$/.test(t));
  let at = 0;
  const peek = () => list[at];
  const fail = (what: string): never => {
    throw new FormulaError(`The formula is not valid: ${what}. Use series letters (A, B, …), numbers, + - * / and parentheses.`);
  };

  const primary = (depth: number): Formula => {
    if (depth > MAX_DEPTH) fail('it is nested too deeply');
    const token = list[at++];
    if (token === undefined) return fail('it ends too early');
    if (token === '(') {
      const inner = sum(depth + 1);
      if (list[at++] !== ')') fail('a parenthesis is not closed');
      return inner;
    }
    if (token === '-') return { kind: 'neg', arg: primary(depth + 1) };
    if (token === '+') return primary(depth + 1);
    if (/^[A-Z]$/.test(token)) return { kind: 'series', index: token.charCodeAt(0) - 65 };
    if (/^(\d+(\.\d+)?|\.\d+)$/.test(token)) return { kind: 'num', value: Number(token) };
    return fail(`unexpected ${JSON.stringify(token)}`);
  };
  const product = (depth: number): Formula => {
    let left = primary(depth);
    while (peek() === '*' || peek() === '/') {
      const op = list[at++] as '*' | '/';
      left = { kind: 'bin', op, left, right: primary(depth) };
    }
    return left;
  };
  const sum = (depth: number): Formula => {
    let left = product(depth);
    while (peek() === '+' || peek() === '-') {
      const op = list[at++] as '+' | '-';
      left = { kind: 'bin', op, left, right: product(depth) };
    }
    return left;
  };

  if (list.length === 0) fail('it is empty');
  const tree = sum(0);
  if (at < list.length) fail(`unexpected ${JSON.stringify(list[at])}`);
  return tree;
}

/** Highest series index a formula refers to (-1 when none). */
export function maxSeriesIndex(f: Formula): number {
  switch (f.kind) {
    case 'num':
      return -1;
    case 'series':
      return f.index;
    case 'neg':
      return maxSeriesIndex(f.arg);
    case 'bin':
      return Math.max(maxSeriesIndex(f.left), maxSeriesIndex(f.right));
  }
}

function raw(f: Formula, values: readonly number[]): number {
  switch (f.kind) {
    case 'num':
      return f.value;
    case 'series':
      return values[f.index] ?? 0;
    case 'neg':
      return -raw(f.arg, values);
    case 'bin': {
      const a = raw(f.left, values);
      const b = raw(f.right, values);
      return f.op === '+' ? a + b : f.op === '-' ? a - b : f.op === '*' ? a * b : a / b;
    }
  }
}

export function evaluateFormula(f: Formula, values: readonly number[]): number {
  const value = raw(f, values);
  return Number.isFinite(value) ? value : 0;
}
