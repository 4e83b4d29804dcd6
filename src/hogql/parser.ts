/**
 * Recursive-descent parser for HogQL expressions with ClickHouse precedence, lowest first:
 * OR, AND, NOT, IS [NOT] NULL, comparisons (= != < <= > >= [NOT] IN, [NOT] [I]LIKE),
 * + -, * / %, unary minus, then postfix `.name` and `[index]`.
 * Input size and nesting are bounded so hostile input fails with a HogQLError, never a
 * stack overflow.
 */
import type { CompareOp, Expr, Field, FromItem, JoinClause, JoinKind, OrderItem, SelectCore, SelectItem, SelectStatement, Span, WindowSpec } from './ast.js';
import { treeDepth } from './ast.js';
import { HogQLError, errorAt, quoteForMessage } from './errors.js';
import { type Token, tokenize } from './lexer.js';

export const MAX_EXPRESSION_LENGTH = 10_000;
export const MAX_DEPTH = 64;
/** A whole HogQLQuery statement may be longer than one expression. */
export const MAX_QUERY_LENGTH = 100_000;

/** Words that end an expression in a statement, so they are never read as an implicit alias. */
const CLAUSE_WORDS = new Set([
  'select', 'from', 'where', 'group', 'by', 'having', 'order', 'limit', 'offset', 'union', 'all', 'join', 'inner', 'left',
  'right', 'full', 'outer', 'cross', 'on', 'with', 'distinct', 'asc', 'desc', 'as', 'and', 'or', 'not', 'in', 'like',
  'ilike', 'is', 'null', 'between', 'case', 'when', 'then', 'else', 'end', 'over', 'partition', 'nulls', 'settings',
  'using', 'any', 'global', 'format',
]);

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

/** Parses a whole statement: SELECT … [UNION ALL SELECT …], with WITH, JOINs and subqueries. */
export function parseSelect(source: string): SelectStatement {
  const parser = new Parser(source, MAX_QUERY_LENGTH);
  const statement = parser.statement();
  parser.expectEnd();
  return statement;
}

function checkDepth(expr: Expr): Expr {
  if (treeDepth(expr) > MAX_DEPTH) throw errorAt(`Expression is nested too deeply (limit ${MAX_DEPTH})`, expr.start);
  return expr;
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;
  private nesting = 0;

  constructor(
    private readonly source: string,
    maxLength = MAX_EXPRESSION_LENGTH,
  ) {
    if (typeof source !== 'string') throw new HogQLError('Expression must be a string');
    if (source.length > maxLength) {
      throw new HogQLError(`Expression is too long (${source.length} characters, limit ${maxLength})`);
    }
    this.tokens = tokenize(source);
    if (this.peek().kind === 'end') throw errorAt('Empty expression', 0);
  }

  expression(): Expr {
    return this.nested(this.peek(), () => this.or());
  }

  // --- statements ----------------------------------------------------------------------

  /** `core (UNION ALL core)*`; a trailing `;` is allowed at the top. */
  statement(): SelectStatement {
    return this.nested(this.peek(), () => {
      const first = this.selectCore();
      const queries: SelectStatement[] = [first];
      let all: boolean | null = null;
      while (this.isKeyword('union')) {
        const union = this.next();
        const isAll = this.isKeyword('all');
        if (!isAll && !this.isKeyword('distinct')) throw errorAt('UNION must be followed by ALL or DISTINCT', union.start);
        this.next();
        if (all !== null && all !== isAll) throw errorAt('Mixing UNION ALL and UNION DISTINCT needs parentheses', union.start);
        all = isAll;
        queries.push(this.selectCore());
      }
      if (queries.length === 1) return first;
      return { kind: 'union', all: all ?? true, queries, start: first.start, end: queries[queries.length - 1].end };
    });
  }

  private selectCore(): SelectStatement {
    if (this.isOperator('(')) {
      const open = this.next();
      const inner = this.nested(open, () => this.statement());
      this.expectOperator(')');
      return inner;
    }
    const start = this.peek().start;
    const ctes: SelectCore['ctes'] = [];
    if (this.isKeyword('with')) {
      this.next();
      do {
        const name = this.aliasName();
        this.expectKeyword('as');
        const open = this.expectOperator('(');
        const query = this.nested(open, () => this.statement());
        this.expectOperator(')');
        ctes.push({ name: name.text, query, start: name.start });
      } while (this.isOperator(',') && this.next());
    }
    this.expectKeyword('select');
    const distinct = this.isKeyword('distinct') ? (this.next(), true) : false;
    const columns: SelectItem[] = [];
    do {
      if (this.isOperator('*')) {
        const star = this.next();
        columns.push({ expr: { kind: 'star', start: star.start, end: star.end }, alias: null });
      } else {
        const expr = this.statementExpr();
        columns.push({ expr, alias: this.optionalAlias() });
      }
    } while (this.isOperator(',') && this.next());
    let from: FromItem | null = null;
    const joins: JoinClause[] = [];
    if (this.isKeyword('from')) {
      this.next();
      from = this.fromItem();
      for (let join = this.joinClause(); join; join = this.joinClause()) joins.push(join);
    }
    const where = this.isKeyword('where') ? (this.next(), this.statementExpr()) : null;
    const groupBy: Expr[] = [];
    if (this.isKeyword('group')) {
      this.next();
      this.expectKeyword('by');
      do groupBy.push(this.statementExpr());
      while (this.isOperator(',') && this.next());
    }
    const having = this.isKeyword('having') ? (this.next(), this.statementExpr()) : null;
    const orderBy = this.isKeyword('order') ? (this.next(), this.expectKeyword('by'), this.orderList()) : [];
    let limit: Expr | null = null;
    let offset: Expr | null = null;
    let limitBy: SelectCore['limitBy'] = null;
    if (this.isKeyword('limit') && this.isLimitBy()) {
      this.next();
      const count = this.statementExpr();
      this.expectKeyword('by');
      const by: Expr[] = [];
      do by.push(this.statementExpr());
      while (this.isOperator(',') && this.next());
      limitBy = { count, by };
    }
    if (this.isKeyword('limit')) {
      this.next();
      limit = this.statementExpr();
      if (this.isOperator(',')) {
        // `LIMIT offset, count`
        this.next();
        offset = limit;
        limit = this.statementExpr();
      } else if (this.isKeyword('offset')) {
        this.next();
        offset = this.statementExpr();
      }
    }
    if (!offset && this.isKeyword('offset')) {
      this.next();
      offset = this.statementExpr();
    }
    const end = this.tokens[Math.max(0, this.pos - 1)].end;
    return { kind: 'select', ctes, distinct, columns, from, joins, where, groupBy, having, orderBy, limitBy, limit, offset, start, end };
  }

  /** `LIMIT <number> BY`: the LIMIT at the cursor is a LIMIT BY. */
  private isLimitBy(): boolean {
    return this.tokens[this.pos + 1]?.kind === 'number' && this.isKeywordAt(this.pos + 2, ['by']);
  }

  private statementExpr(): Expr {
    return checkDepth(this.expression());
  }

  private orderList(): OrderItem[] {
    const items: OrderItem[] = [];
    do {
      const expr = this.statementExpr();
      let desc = false;
      if (this.isKeyword('desc') || this.isKeyword('asc')) desc = this.next().text.toLowerCase() === 'desc';
      items.push({ expr, desc });
    } while (this.isOperator(',') && this.next());
    return items;
  }

  private fromItem(): FromItem {
    const token = this.peek();
    if (this.isOperator('(')) {
      const open = this.next();
      const query = this.nested(open, () => this.statement());
      this.expectOperator(')');
      return { kind: 'subquery', query, alias: this.optionalAlias(), start: token.start };
    }
    const name = this.next();
    if (name.kind !== 'identifier') throw this.unexpected(name);
    if (this.isOperator('(')) throw errorAt(`Table functions are not supported (${quoteForMessage(name.text, 40)})`, name.start);
    return { kind: 'table', name: name.text, alias: this.optionalAlias(), start: name.start };
  }

  private joinClause(): JoinClause | null {
    if (this.isOperator(',')) {
      this.next();
      return { type: 'CROSS', item: this.fromItem(), on: null };
    }
    let type: JoinKind | null = null;
    const word = this.peek();
    if (this.isKeyword('join')) type = 'INNER';
    else if (this.isKeyword('inner')) type = 'INNER';
    else if (this.isKeyword('left')) type = 'LEFT';
    else if (this.isKeyword('right')) type = 'RIGHT';
    else if (this.isKeyword('full')) type = 'FULL';
    else if (this.isKeyword('cross')) type = 'CROSS';
    if (!type) return null;
    if (!this.isKeyword('join')) {
      this.next();
      if (this.isKeyword('outer')) this.next();
      if (this.isKeyword('any') || this.isKeyword('all')) throw errorAt('ANY/ALL joins are not supported', this.peek().start);
    }
    this.expectKeyword('join');
    const item = this.fromItem();
    if (type === 'CROSS') return { type, item, on: null };
    if (!this.isKeyword('on')) throw errorAt(`${type} JOIN needs an ON condition`, word.start);
    this.next();
    return { type, item, on: this.statementExpr() };
  }

  /** `AS name`, or a bare name that is not a clause word. */
  private optionalAlias(): string | null {
    if (this.isKeyword('as')) {
      this.next();
      return this.aliasName().text;
    }
    const token = this.peek();
    if (token.kind === 'identifier' && (token.quoted || !CLAUSE_WORDS.has(token.text.toLowerCase()))) {
      this.next();
      if (token.text === '') throw errorAt('Alias cannot be empty', token.start);
      return token.text;
    }
    return null;
  }

  private aliasName(): Token {
    const token = this.next();
    if (token.kind !== 'identifier' || (!token.quoted && CLAUSE_WORDS.has(token.text.toLowerCase()))) throw this.unexpected(token);
    if (token.text === '') throw errorAt('Alias cannot be empty', token.start);
    return token;
  }

  private expectKeyword(word: string): Token {
    const token = this.next();
    if (!this.tokenIsKeyword(token, word)) throw this.unexpected(token);
    return token;
  }

  private isStatementStart(index: number): boolean {
    return this.isKeywordAt(index, ['select', 'with']);
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
      if (this.isKeyword('not') && this.isKeywordAt(this.pos + 1, ['in', 'like', 'ilike', 'between'])) {
        this.next();
        negated = true;
      }
      if (this.isKeyword('between')) {
        // `x BETWEEN a AND b` is `x >= a AND x <= b`.
        this.next();
        const low = this.additive();
        this.expectKeyword('and');
        const high = this.additive();
        const both: Expr = {
          kind: 'and',
          exprs: [
            { kind: 'compare', op: '>=', left, right: low, ...span(left, low) },
            { kind: 'compare', op: '<=', left, right: high, ...span(left, high) },
          ],
          ...span(left, high),
        };
        left = negated ? { kind: 'not', expr: both, ...span(left, high) } : both;
      } else if (this.isKeyword('in')) {
        this.next();
        if (this.isOperator('(') && this.isStatementStart(this.pos + 1)) {
          const open = this.next();
          const query = this.nested(open, () => this.statement());
          const close = this.expectOperator(')');
          const sub: Expr = { kind: 'subquery', query, start: open.start, end: close.end };
          left = { kind: 'in', negated, left, list: [sub], start: left.start, end: close.end };
          continue;
        }
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
        if (token.text === '(' && this.isStatementStart(this.pos)) {
          const query = this.nested(token, () => this.statement());
          const close = this.expectOperator(')');
          return { kind: 'subquery', query, start: token.start, end: close.end };
        }
        if (token.text === '[') {
          const items = this.isOperator(']') ? [] : this.nested(token, () => this.commaSeparated());
          const close = this.expectOperator(']');
          return { kind: 'array', items, start: token.start, end: close.end };
        }
        if (token.text === '(' && this.isLambdaStart(this.pos - 1)) return this.lambda(token);
        if (token.text === '(') {
          const expr = this.nested(token, () => this.or());
          const close = this.expectOperator(')');
          // Keep the parentheses in the span so error positions and column text match the source.
          return { ...expr, start: token.start, end: close.end };
        }
        throw this.unexpected(token);
      case 'identifier':
        return this.identifier(token);
      case 'placeholder':
        return { kind: 'placeholder', name: token.text, start: token.start, end: token.end };
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
      if (word === 'interval' && !this.isOperator('(') && this.peek().kind !== 'end' && !this.isOperator(',') && !this.isOperator(')')) return this.interval(token);
      if (word === 'case' && this.peek().kind !== 'end' && !this.isOperator('.')) return this.caseExpr(token);
      if (this.isOperator('(')) return this.call(token);
    }
    if (this.isOperator('->')) return this.lambda(token);
    const field: Field = {
      kind: 'field',
      chain: [{ name: token.text, start: token.start, end: token.end }],
      start: token.start,
      end: token.end,
    };
    return field;
  }

  private call(name: Token): Expr {
    let [args, distinct, end] = this.callArguments();
    let params: Expr[] | undefined;
    if (this.isOperator('(')) {
      // `quantile(0.9)(x)`: the first list was the parameters.
      if (distinct) throw this.unexpected(this.peek());
      params = args;
      [args, distinct, end] = this.callArguments();
    }
    const call: Expr = { kind: 'call', name: name.text, args, start: name.start, end, ...(distinct && { distinct }), ...(params && { params }) };
    if (this.isKeyword('over')) {
      this.next();
      const open = this.expectOperator('(');
      const over = this.nested(open, () => this.windowSpec());
      const close = this.expectOperator(')');
      return { ...call, over, end: close.end };
    }
    return call;
  }

  private callArguments(): [Expr[], boolean, number] {
    const open = this.expectOperator('(');
    const args: Expr[] = [];
    let distinct = false;
    if (this.isOperator('*') && this.isOperatorAt(this.pos + 1, ')')) {
      const star = this.next();
      args.push({ kind: 'star', start: star.start, end: star.end });
    } else if (!this.isOperator(')')) {
      if (this.isKeyword('distinct')) {
        this.next();
        distinct = true;
      }
      args.push(...this.nested(open, () => this.commaSeparated()));
    }
    const close = this.expectOperator(')');
    return [args, distinct, close.end];
  }

  private windowSpec(): WindowSpec {
    const partitionBy: Expr[] = [];
    if (this.isKeyword('partition')) {
      this.next();
      this.expectKeyword('by');
      partitionBy.push(...this.commaSeparated());
    }
    const orderBy = this.isKeyword('order') ? (this.next(), this.expectKeyword('by'), this.orderList()) : [];
    if (!this.isOperator(')')) throw errorAt('Window frames are not supported; use PARTITION BY and ORDER BY', this.peek().start);
    return { partitionBy, orderBy };
  }

  /** `(a, b) ->`: an identifier list in parentheses followed by an arrow. */
  private isLambdaStart(open: number): boolean {
    let index = open + 1;
    while (this.tokens[index]?.kind === 'identifier') {
      if (this.isOperatorAt(index + 1, ')')) return this.isOperatorAt(index + 2, '->');
      if (!this.isOperatorAt(index + 1, ',')) return false;
      index += 2;
    }
    return false;
  }

  /** `x -> body` (first is the name) or `(x, y) -> body` (first is the open parenthesis). */
  private lambda(first: Token): Expr {
    const params: Token[] = [];
    if (first.kind === 'identifier') {
      params.push(first);
    } else {
      do params.push(this.next());
      while (this.isOperator(',') && this.next());
      this.expectOperator(')');
    }
    this.expectOperator('->');
    const body = this.nested(first, () => this.or());
    return { kind: 'lambda', params: params.map((t) => ({ name: t.text, start: t.start, end: t.end })), body, start: first.start, end: body.end };
  }

  /** `INTERVAL <amount> <unit>`. */
  private interval(keyword: Token): Expr {
    const amount = this.unary();
    const unit = this.next();
    if (unit.kind !== 'identifier' || unit.quoted) throw this.unexpected(unit);
    return { kind: 'interval', amount, unit: unit.text, start: keyword.start, end: unit.end };
  }

  /** `CASE [x] WHEN a THEN b … [ELSE c] END`, read as multiIf (or as multiIf(x = a, …)). */
  private caseExpr(keyword: Token): Expr {
    return this.nested(keyword, () => {
      const subject = this.isKeyword('when') ? null : this.or();
      const args: Expr[] = [];
      while (this.isKeyword('when')) {
        this.next();
        const when = this.or();
        this.expectKeyword('then');
        const then = this.or();
        args.push(subject ? { kind: 'compare', op: '=', left: subject, right: when, ...span(subject, when) } : when, then);
      }
      if (args.length === 0) throw this.unexpected(this.peek());
      const otherwise: Expr = this.isKeyword('else') ? (this.next(), this.or()) : { kind: 'constant', value: null, start: keyword.start, end: keyword.end };
      const end = this.expectKeyword('end');
      return { kind: 'call', name: 'multiIf', args: [...args, otherwise], start: keyword.start, end: end.end };
    });
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
