import { api } from '../../api/client';
import { useResource } from '../../api/use-resource';
import { projectApi, useProject } from '../../auth/project';

/** Group type index (as text) → name, as ingestion met them (from the local-evaluation definitions). */
export function useGroupTypes(): Record<string, string> {
  const project = useProject();
  const definitions = useResource(
    (signal) => api<{ group_type_mapping: Record<string, string> }>(projectApi(project, 'feature_flags/local_evaluation'), { signal }),
    [project.id],
  );
  return definitions.data?.group_type_mapping ?? {};
}
