/**
 * Projects of the organizations a user belongs to. Creating one needs an admin of its
 * organization; any member may edit settings (as PostHog's project permissions allow). Every
 * change drops the token cache of the capture and flag paths.
 */
import { notFound, permissionDenied, validationError } from '../../kernel/errors.js';
import type { Membership, Project, TenancyStore } from '../../store/types.js';
import { newProjectApiKey } from '../../util/keys.js';
import { ADMIN } from '../members/rules.js';

export interface ProjectSettings {
  name?: string;
  timezone?: string;
  anonymize_ips?: boolean;
}

export class Projects {
  constructor(
    private readonly tenancy: TenancyStore,
    /** Drops every cached project (token lookups). */
    private readonly invalidate: () => void,
  ) {}

  /** Every project the user can see, with the membership that grants it, by id. */
  async visibleTo(userId: number): Promise<{ project: Project; membership: Membership }[]> {
    const all = [];
    for (const membership of await this.tenancy.listMembershipsOfUser(userId)) {
      for (const project of await this.tenancy.listProjectsOfOrganization(membership.organization_id)) all.push({ project, membership });
    }
    return all.sort((a, b) => a.project.id - b.project.id);
  }

  /** A new project with its own API token, in the organization of `actor`. */
  async create(actor: Membership, settings: ProjectSettings & { name: string }): Promise<Project> {
    if (actor.level < ADMIN) throw permissionDenied('Your organization access level is insufficient.');
    checkTimezone(settings.timezone);
    const created = await this.tenancy.createProject({ organizationId: actor.organization_id, name: settings.name, apiToken: newProjectApiKey() });
    const { timezone, anonymize_ips } = settings;
    const project = timezone !== undefined || anonymize_ips !== undefined ? await this.tenancy.updateProject(created.id, { timezone, anonymize_ips }) : created;
    this.invalidate();
    return project!;
  }

  async update(projectId: number, settings: ProjectSettings): Promise<Project> {
    checkTimezone(settings.timezone);
    const updated = await this.tenancy.updateProject(projectId, settings);
    if (!updated) throw notFound('Project not found.');
    this.invalidate();
    return updated;
  }
}

function checkTimezone(timezone: string | undefined): void {
  if (timezone === undefined) return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw validationError(`"${timezone}" is not a valid time zone.`, 'timezone', 'invalid_choice');
  }
}
