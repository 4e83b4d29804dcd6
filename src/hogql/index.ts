/** Public surface of the HogQL compiler and its dialect seam. */
export {
  compileFilters,
  compileOrderBy,
  compileSelect,
  compileWhere,
  EventsScope,
  groupByFor,
  MAX_EXPRESSIONS,
  typedProperty,
  type SelectResult,
  type WhereResult,
} from './compile.js';
export { currentPersonOf, lazyJoins, type TableBinding } from './fields.js';
export { HogQLError } from './errors.js';
export type { CompileContext, PropertyKind, PropertyValueType } from './context.js';
export { decodeRows, type PrintOptions, type PrintedQuery, type SqlDialect } from './dialect.js';
export { parseExpression, parseSelect, parseSelectItem, MAX_DEPTH, MAX_EXPRESSION_LENGTH, MAX_QUERY_LENGTH } from './parser.js';
export { StatementCompiler, type CompiledStatement, type Placeholders } from './statement.js';
export { parseLiteral, timestampMs, timestampText } from './dates.js';
export { formatExpr } from './format.js';
export { escapeRegex, re2SyntaxError } from './re2.js';
export type { HogQLType } from './types.js';
export type { Expr, SelectItem, SelectStatement } from './ast.js';
export * as ir from './ir.js';
