/**
 * Recursive-descent parser for HogQL expressions with ClickHouse precedence, lowest first:
 * OR, AND, NOT, IS [NOT] NULL, comparisons (= != < <= > >= [NOT] IN, [NOT] [I]LIKE),
 * + -, * / %, unary minus, then postfix `.name` and `[index]`.
 * Input size and nesting are bounded so hostile input fails with a HogQLError, never a
 * stack overflow.
 */
import type { CompareOp, Expr, Field, SelectItem, Span } from './ast.js';
import { treeDepth } from './ast.js';
import { HogQLError, errorAt, quoteForMessage } from './errors.js';
import { type Token, tokenize } from './lexer.js';

export const MAX_EXPRESSION_LENGTH = 10_000;
export const MAX_DEPTH = 64;

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'like', 'ilike', 'is', 'null', 'true', 'false', 'as']);

const COMPARE_OPS: Record<string, CompareOp> = {
  '=': '=',
  '==': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

/** Parses one expression, e.g. a `where` entry. */
export function parseExpression(source: string): Expr {
  const parser = new Parser(source);
  const expr = parser.expression();
  parser.expectEnd();
  return checkDepth(expr);
}

/** Parses one `select` entry: an expression with an optional trailing `AS alias`. */
export function parseSelectItem(source: string): SelectItem {
  const parser = new Parser(source);
  const expr = parser.expression();
  const alias = parser.alias();
  parser.expectEnd();
  return { expr: checkDepth(expr), alias };
}

function checkDepth(expr: Expr): Expr {
  if (treeDepth(expr) > MAX_DEPTH) throw errorAt(`Expression is nested too deeply (limit ${MAX_DEPTH})`, expr.start);
  return expr;
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;
  private nesting = 0;

  constructor(private readonly source: string) {
    if (typeof source !== 'string') throw new HogQLError('Expression must be a string');
    if (source.length > MAX_EXPRESSION_LENGTH) {
      throw new HogQLError(`Expression is too long (${source.length} characters, limit ${MAX_EXPRESSION_LENGTH})`);
    }
    this.tokens = tokenize(source);
    if (this.peek().kind === 'end') throw errorAt('Empty expression', 0);
  }

  expression(): Expr {
    return this.nested(this.peek(), () => this.or());
  }

  alias(): string | null {
    if (!this.isKeyword('as')) return null;
    this.next();
    const token = this.next();
    if (token.kind !== 'identifier' || (!token.quoted && KEYWORDS.has(token.text.toLowerCase()))) {
      throw this.unexpected(token);
    }
    if (token.text === '') throw errorAt('Alias cannot be empty', token.start);
    return token.text;
  }

  expectEnd(): void {
    const token = this.peek();
    if (token.kind !== 'end') throw this.unexpected(token);
  }

  // --- precedence levels -------------------------------------------------------------

  private or(): Expr {
    return this.logical('or', () => this.and());
  }

  private and(): Expr {
    return this.logical('and', () => this.not());
  }

  private logical(kind: 'and' | 'or', operand: () => Expr): Expr {
    const first = operand();
    if (!this.isKeyword(kind)) return first;
    const exprs = [first];
    while (this.isKeyword(kind)) {
      this.next();
      exprs.push(operand());
    }
    return { kind, exprs, ...span(first, exprs[exprs.length - 1]) };
  }

  private not(): Expr {
    if (!this.isKeyword('not')) return this.isNull();
    const keyword = this.next();
    const expr = this.nested(keyword, () => this.not());
    return { kind: 'not', expr, start: keyword.start, end: expr.end };
  }

  private isNull(): Expr {
    let expr = this.comparison();
    while (this.isKeyword('is')) {
      this.next();
      let negated = false;
      if (this.isKeyword('not')) {
        this.next();
        negated = true;
      }
      const last = this.next();
      if (!this.tokenIsKeyword(last, 'null')) throw this.unexpected(last);
      expr = { kind: 'isNull', negated, expr, start: expr.start, end: last.end };
    }
    return expr;
  }

  private comparison(): Expr {
    let left = this.additive();
    while (true) {
      const token = this.peek();
      const op = token.kind === 'operator' ? COMPARE_OPS[token.text] : undefined;
      if (op) {
        this.next();
        const right = this.additive();
        left = { kind: 'compare', op, left, right, ...span(left, right) };
        continue;
      }
      let negated = false;
      if (this.isKeyword('not') && this.isKeywordAt(this.pos + 1, ['in', 'like', 'ilike'])) {
        this.next();
        negated = true;
      }
      if (this.isKeyword('in')) {
        this.next();
        const [list, end] = this.parenthesisedList();
        left = { kind: 'in', negated, left, list, start: left.start, end };
      } else if (this.isKeyword('like') || this.isKeyword('ilike')) {
        const caseInsensitive = this.next().text.toLowerCase() === 'ilike';
        const pattern = this.additive();
        left = { kind: 'like', caseInsensitive, negated, left, pattern, ...span(left, pattern) };
      } else {
        return left;
      }
    }
  }

  private additive(): Expr {
    let left = this.multiplicative();
    while (this.isOperator('+') || this.isOperator('-')) {
      const op = this.next().text as '+' | '-';
      const right = this.multiplicative();
      left = { kind: 'arithmetic', op, left, right, ...span(left, right) };
    }
    return left;
  }

  private multiplicative(): Expr {
    let left = this.unary();
    while (this.isOperator('*') || this.isOperator('/') || this.isOperator('%')) {
      const op = this.next().text as '*' | '/' | '%';
      const right = this.unary();
      left = { kind: 'arithmetic', op, left, right, ...span(left, right) };
    }
    return left;
  }

  private unary(): Expr {
    if (!this.isOperator('-')) return this.postfix();
    const minus = this.next();
    const expr = this.nested(minus, () => this.unary());
    return { kind: 'negate', expr, start: minus.start, end: expr.end };
  }

  private postfix(): Expr {
    let expr = this.primary();
    while (true) {
      if (this.isOperator('.')) {
        const dot = this.next();
        const name = this.next();
        if (name.kind !== 'identifier') throw this.unexpected(name);
        if (expr.kind === 'field') {
          expr = { ...expr, chain: [...expr.chain, { name: name.text, start: name.start, end: name.end }], end: name.end };
        } else if (expr.kind === 'index') {
          // `x['a'].b` reads like `x['a']['b']`.
          const key: Expr = { kind: 'constant', value: name.text, start: name.start, end: name.end };
          expr = { kind: 'index', target: expr, index: key, start: expr.start, end: name.end };
        } else {
          throw this.unexpected(dot);
        }
      } else if (this.isOperator('[')) {
        const open = this.next();
        const index = this.nested(open, () => this.or());
        const close = this.expectOperator(']');
        expr = { kind: 'index', target: expr, index, start: expr.start, end: close.end };
      } else {
        return expr;
      }
    }
  }

  private primary(): Expr {
    const token = this.next();
    switch (token.kind) {
      case 'number':
        return numberConstant(token);
      case 'string':
        return { kind: 'constant', value: token.text, start: token.start, end: token.end };
      case 'operator':
        if (token.text === '(') {
          const expr = this.nested(token, () => this.or());
          const close = this.expectOperator(')');
          // Keep the parentheses in the span so error positions and column text match the source.
          return { ...expr, start: token.start, end: close.end };
        }
        throw this.unexpected(token);
      case 'identifier':
        return this.identifier(token);
      case 'end':
        throw this.unexpected(token);
    }
  }

  private identifier(token: Token): Expr {
    if (!token.quoted) {
      const word = token.text.toLowerCase();
      if (word === 'true' || word === 'false') {
        return { kind: 'constant', value: word === 'true', start: token.start, end: token.end };
      }
      if (word === 'null') return { kind: 'constant', value: null, start: token.start, end: token.end };
      if (KEYWORDS.has(word)) throw this.unexpected(token);
      if (this.isOperator('(')) return this.call(token);
    }
    const field: Field = {
      kind: 'field',
      chain: [{ name: token.text, start: token.start, end: token.end }],
      start: token.start,
      end: token.end,
    };
    return field;
  }

  private call(name: Token): Expr {
    const open = this.expectOperator('(');
    const args: Expr[] = [];
    if (this.isOperator('*') && this.isOperatorAt(this.pos + 1, ')')) {
      const star = this.next();
      args.push({ kind: 'star', start: star.start, end: star.end });
    } else if (!this.isOperator(')')) {
      args.push(...this.nested(open, () => this.commaSeparated()));
    }
    const close = this.expectOperator(')');
    return { kind: 'call', name: name.text, args, start: name.start, end: close.end };
  }

  private parenthesisedList(): [Expr[], number] {
    const open = this.expectOperator('(');
    const list = this.nested(open, () => this.commaSeparated());
    const close = this.expectOperator(')');
    return [list, close.end];
  }

  private commaSeparated(): Expr[] {
    const items = [this.or()];
    while (this.isOperator(',')) {
      this.next();
      items.push(this.or());
    }
    return items;
  }

  // --- token helpers -----------------------------------------------------------------

  /** Runs a nested parse, refusing to go deeper than MAX_DEPTH levels. */
  private nested<T>(at: Token, parse: () => T): T {
    if (++this.nesting > MAX_DEPTH) throw errorAt(`Expression is nested too deeply (limit ${MAX_DEPTH})`, at.start);
    try {
      return parse();
    } finally {
      this.nesting--;
    }
  }

  private peek(): Token {
    return this.tokens[this.pos];
  }

  private next(): Token {
    const token = this.tokens[this.pos];
    if (token.kind !== 'end') this.pos++;
    return token;
  }

  private isOperator(text: string): boolean {
    return this.isOperatorAt(this.pos, text);
  }

  private isOperatorAt(index: number, text: string): boolean {
    const token = this.tokens[index];
    return token !== undefined && token.kind === 'operator' && token.text === text;
  }

  private isKeyword(word: string): boolean {
    return this.tokenIsKeyword(this.peek(), word);
  }

  private isKeywordAt(index: number, words: string[]): boolean {
    const token = this.tokens[index];
    return token !== undefined && words.some((word) => this.tokenIsKeyword(token, word));
  }

  private tokenIsKeyword(token: Token, word: string): boolean {
    return token.kind === 'identifier' && !token.quoted && token.text.toLowerCase() === word;
  }

  private expectOperator(text: string): Token {
    const token = this.next();
    if (token.kind !== 'operator' || token.text !== text) throw this.unexpected(token);
    return token;
  }

  private unexpected(token: Token): HogQLError {
    if (token.kind === 'end') return errorAt('Unexpected end of expression', token.start);
    return errorAt(`Unexpected token ${quoteForMessage(this.source.slice(token.start, token.end), 40)}`, token.start);
  }
}

function numberConstant(token: Token): Expr {
  const value = Number(token.text);
  if (!Number.isFinite(value)) throw errorAt(`Number out of range ${quoteForMessage(token.text, 40)}`, token.start);
  const integer = /^\d+$/.test(token.text) && Number.isSafeInteger(value);
  return { kind: 'constant', value, integer, start: token.start, end: token.end };
}

function span(first: Span, last: Span): Span {
  return { start: first.start, end: last.end };
}
