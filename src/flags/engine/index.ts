/** The flag engine's public surface: pure evaluation and validation, no I/O. */
export { evaluateEach, evaluateFlag, evaluateFlags, flagValue } from './evaluate.js';
export { compileFlags, type CompiledFlag, type CompiledFlags } from './compile.js';
export { validateFlagFilters, validateFlagKey, FlagValidationError } from './validate.js';
export { dependencyChain, indexFlags, withDependencyChains } from './dependencies.js';
export { matchProperty, PROPERTY_OPERATORS } from './operators.js';
export { flagHash, holdoutHash, variantHash } from './hash.js';
export type * from './types.js';
