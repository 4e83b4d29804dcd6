/**
 * AST → canonical HogQL text (fully parenthesised). Used for round-trip tests and for
 * readable names of generated expressions; never for SQL.
 */
import type { ConstantValue, Expr } from './ast.js';

const PLAIN_IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'like', 'ilike', 'is', 'null', 'true', 'false', 'as']);

export function formatExpr(expr: Expr): string {
  switch (expr.kind) {
    case 'constant':
      return formatConstant(expr.value, expr.integer);
    case 'field':
      return expr.chain.map((part) => formatIdentifier(part.name)).join('.');
    case 'index':
      return `${formatExpr(expr.target)}[${formatExpr(expr.index)}]`;
    case 'star':
      return '*';
    case 'call': {
      const params = expr.params ? `(${expr.params.map(formatExpr).join(', ')})` : '';
      const text = `${expr.name}${params}(${expr.distinct ? 'DISTINCT ' : ''}${expr.args.map(formatExpr).join(', ')})`;
      if (!expr.over) return text;
      const over = [
        expr.over.partitionBy.length > 0 ? `PARTITION BY ${expr.over.partitionBy.map(formatExpr).join(', ')}` : '',
        expr.over.orderBy.length > 0 ? `ORDER BY ${expr.over.orderBy.map((o) => `${formatExpr(o.expr)}${o.desc ? ' DESC' : ''}`).join(', ')}` : '',
      ].filter(Boolean);
      return `${text} OVER (${over.join(' ')})`;
    }
    case 'interval':
      return `INTERVAL ${formatExpr(expr.amount)} ${expr.unit.toUpperCase()}`;
    case 'subquery':
      return '(SELECT …)';
    case 'placeholder':
      return `{${expr.name}}`;
    case 'array':
      return `[${expr.items.map(formatExpr).join(', ')}]`;
    case 'lambda':
      return `((${expr.params.map((p) => formatIdentifier(p.name)).join(', ')}) -> ${formatExpr(expr.body)})`;
    case 'negate':
      return `-(${formatExpr(expr.expr)})`;
    case 'not':
      return `NOT (${formatExpr(expr.expr)})`;
    case 'arithmetic':
    case 'compare':
      return `(${formatExpr(expr.left)} ${expr.op} ${formatExpr(expr.right)})`;
    case 'like':
      return `(${formatExpr(expr.left)} ${expr.negated ? 'NOT ' : ''}${expr.caseInsensitive ? 'ILIKE' : 'LIKE'} ${formatExpr(expr.pattern)})`;
    case 'in':
      return `(${formatExpr(expr.left)} ${expr.negated ? 'NOT IN' : 'IN'} (${expr.list.map(formatExpr).join(', ')}))`;
    case 'isNull':
      return `(${formatExpr(expr.expr)} IS ${expr.negated ? 'NOT ' : ''}NULL)`;
    case 'and':
    case 'or':
      return `(${expr.exprs.map(formatExpr).join(expr.kind === 'and' ? ' AND ' : ' OR ')})`;
  }
}

export function formatIdentifier(name: string): string {
  if (PLAIN_IDENTIFIER.test(name) && !KEYWORDS.has(name.toLowerCase())) return name;
  return `\`${escapeText(name).replace(/`/g, '\\`')}\``;
}

function formatConstant(value: ConstantValue, integer?: boolean): string {
  if (value === null) return 'NULL';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    // Keep floats recognisable as floats so a round trip preserves the type.
    const text = String(value);
    return integer || /[.e]/.test(text) ? text : `${text}.0`;
  }
  return `'${escapeText(value).replace(/'/g, "\\'")}'`;
}

function escapeText(text: string): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t')
    .replace(/\0/g, '\\0');
}
