import type { ErrorCode } from '../../kernel/errors.js';

/**
 * Raised while evaluating when a filter cannot be decided from the data the engine has
 * (cohort filters, unknown operators, missing or circular flag dependencies). The
 * evaluator turns it into a `failed` flag result instead of guessing a value.
 */
export class UncomputableFilterError extends Error {
  constructor(
    message: string,
    readonly code: 'missing_dependency' | 'evaluation_error' = 'evaluation_error',
  ) {
    super(message);
    this.name = 'UncomputableFilterError';
  }
}

/** A management-API validation failure, with DRF-style `attr` (e.g. `filters__groups__0__variant`). */
export class FlagValidationError extends Error {
  constructor(
    readonly attr: string,
    readonly detail: string,
    readonly code: ErrorCode = 'invalid_input',
  ) {
    super(detail);
    this.name = 'FlagValidationError';
  }
}
