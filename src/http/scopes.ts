/**
 * Scopes a personal API key may carry, as PostHog's (`posthog/scopes.py` in
 * github.com/PostHog/posthog): `*` or `<object>:<read|write>`.
 * `personal_api_key` is ours: with no session login, keys are managed with keys.
 */
import { hasScope } from './auth.js';
import { permissionDenied, validationError } from '../kernel/errors.js';

export const SCOPE_OBJECTS = [
  'action',
  'activity_log',
  'annotation',
  'batch_export',
  'cohort',
  'dashboard',
  'event_definition',
  'experiment',
  'export',
  'feature_flag',
  'group',
  'insight',
  'notebook',
  'organization',
  'organization_member',
  'person',
  'personal_api_key',
  'plugin',
  'project',
  'property_definition',
  'query',
  'session_recording',
  'survey',
  'user',
  'webhook',
] as const;

const SCOPE = new RegExp(`^(\\*|(${SCOPE_OBJECTS.join('|')}):(read|write))$`);

/**
 * The scopes of a new key, checked for shape and against the creating key's own scopes: a key
 * cannot mint a key with more power than it holds.
 */
export function scopesForNewKey(requested: string[] | undefined, creator: string[] | null): string[] {
  const scopes = requested ?? creator ?? ['*'];
  if (scopes.length === 0) throw validationError('At least one scope is required.', 'scopes');
  for (const scope of scopes) {
    if (!SCOPE.test(scope)) throw validationError(`Invalid scope '${scope}'.`, 'scopes');
    const [object, action] = scope.split(':') as [string, 'read' | 'write' | undefined];
    const held = scope === '*' ? creator === null || creator.includes('*') : hasScope(creator, object, action!);
    if (!held) throw permissionDenied(`API key cannot grant scope '${scope}' that it does not hold itself.`);
  }
  return [...new Set(scopes)];
}
