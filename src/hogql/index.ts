/** Public surface of the HogQL compiler. */
export {
  compileExpression,
  compilePropertyFilters,
  compileSelect,
  compileWhere,
  groupByFor,
  EVENTS_FROM_SQL,
  MAX_EXPRESSIONS,
  PERSON_JOIN_SQL,
  type SelectResult,
  type WhereResult,
} from './compile.js';
export { HogQLError } from './errors.js';
export { ParamSink, type CompileContext, type ParamValue, type PropertyKind, type PropertyValueType } from './params.js';
export { parseExpression, parseSelectItem, MAX_DEPTH, MAX_EXPRESSION_LENGTH } from './parser.js';
export { formatExpr } from './format.js';
export { re2SyntaxError } from './re2.js';
export type { HogQLType } from './types.js';
export type { Expr, SelectItem } from './ast.js';
