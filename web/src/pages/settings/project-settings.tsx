import { useState } from 'preact/hooks';
import { api } from '../../api/client';
import type { Project } from '../../api/types';
import { useProject } from '../../auth/project';
import { useSignedIn } from '../../auth/session';
import { CopyButton } from '../../components/copy';
import { InstallSnippets } from '../../components/install-snippets';
import { ErrorNotice, SuccessNotice } from '../../components/status';

const TIME_ZONES: string[] = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? ['UTC'];

export function ProjectSettings() {
  const project = useProject();
  const { refresh } = useSignedIn();
  const [name, setName] = useState(project.name);
  const [timezone, setTimezone] = useState(project.timezone);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  const zones = TIME_ZONES.includes(project.timezone) ? TIME_ZONES : [project.timezone, ...TIME_ZONES];

  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setSaved(false);
    try {
      await api<Project>(`/api/projects/${project.id}/`, { method: 'PATCH', body: { name, timezone } });
      await refresh();
      setSaved(true);
    } catch (failure) {
      setError(failure as Error);
    }
  };

  return (
    <div class="settings-sections">
      <section class="card" aria-labelledby="key-heading">
        <h2 id="key-heading">Project API key</h2>
        <p>SDKs send events and ask for flags with this key. It is not a secret: it goes into your web pages.</p>
        <div class="secret-row">
          <code class="secret" data-testid="project-api-key">
            {project.api_token}
          </code>
          <CopyButton text={project.api_token} label="Copy key" />
        </div>
      </section>
      <section class="card" aria-labelledby="install-heading">
        <h2 id="install-heading">Send events here</h2>
        <p>The official PostHog SDKs work unchanged: point them at this server.</p>
        <InstallSnippets token={project.api_token} />
      </section>
      <form class="card" onSubmit={save} aria-labelledby="project-heading">
        <h2 id="project-heading">Project</h2>
        <label class="field">
          <span>Name</span>
          <input required maxLength={200} value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label class="field">
          <span>Time zone</span>
          <select value={timezone} onChange={(e) => setTimezone((e.target as HTMLSelectElement).value)}>
            {zones.map((zone) => (
              <option key={zone} value={zone}>
                {zone}
              </option>
            ))}
          </select>
        </label>
        <ErrorNotice error={error} />
        {saved && <SuccessNotice>Saved.</SuccessNotice>}
        <button type="submit" class="button-primary">
          Save
        </button>
      </form>
    </div>
  );
}
