/**
 * Projects of the organizations a user belongs to. Creating one needs an admin of its
 * organization; any member may edit settings (as PostHog's project permissions allow). Every
 * change drops the token cache of the capture and flag paths.
 */
import { notFound, permissionDenied, validationError } from '../../kernel/errors.js';
import type { Membership, Project, ProjectPatch, TenancyStore } from '../../store/types.js';
import { newProjectApiKey } from '../../util/keys.js';
import { ADMIN } from '../members/rules.js';

export type ProjectSettings = ProjectPatch;

/** More test-account filters than this is not a real setting. */
const MAX_TEST_ACCOUNT_FILTERS = 50;
const FILTER_TYPES = ['event', 'person', 'element', 'session', 'cohort', 'group', 'hogql'];

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
    checkSettings(settings);
    const created = await this.tenancy.createProject({ organizationId: actor.organization_id, name: settings.name, apiToken: newProjectApiKey() });
    const { name: _name, ...rest } = settings;
    const changed = Object.values(rest).some((value) => value !== undefined);
    const project = changed ? await this.tenancy.updateProject(created.id, rest) : created;
    this.invalidate();
    return project!;
  }

  async update(projectId: number, settings: ProjectSettings): Promise<Project> {
    checkSettings(settings);
    const updated = await this.tenancy.updateProject(projectId, settings);
    if (!updated) throw notFound('Project not found.');
    this.invalidate();
    return updated;
  }
}

function checkSettings(settings: ProjectSettings): void {
  checkTimezone(settings.timezone);
  const day = settings.week_start_day;
  if (day !== undefined && day !== null && day !== 0 && day !== 1) {
    throw validationError(`"${String(day)}" is not a valid choice: week_start_day is 0 (Sunday), 1 (Monday) or null.`, 'week_start_day', 'invalid_choice');
  }
  if (settings.test_account_filters !== undefined) checkTestAccountFilters(settings.test_account_filters);
}

/**
 * The filters' shape only: each is a property filter object with a key. What its operator and
 * value mean is checked where a query compiles it (a bad one is then that query's 400).
 */
function checkTestAccountFilters(filters: unknown): void {
  const attr = 'test_account_filters';
  if (!Array.isArray(filters)) throw validationError('Expected a list of property filters.', attr, 'not_a_list');
  if (filters.length > MAX_TEST_ACCOUNT_FILTERS) throw validationError(`At most ${MAX_TEST_ACCOUNT_FILTERS} filters.`, attr, 'max_length');
  filters.forEach((filter, index) => {
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
      throw validationError(`Filter ${index} must be an object.`, attr, 'invalid');
    }
    const { key, type } = filter as Record<string, unknown>;
    if (typeof key !== 'string' || key === '') throw validationError(`Filter ${index} needs a key.`, attr, 'invalid');
    if (type !== undefined && (typeof type !== 'string' || !FILTER_TYPES.includes(type))) {
      throw validationError(`Filter ${index} has an unknown type; expected one of ${FILTER_TYPES.join(', ')}.`, attr, 'invalid');
    }
  });
  if (JSON.stringify(filters).length > 20_000) throw validationError('The filters are too large.', attr, 'max_length');
}

function checkTimezone(timezone: string | undefined): void {
  // UTC, every project's default, needs no check: the first Intl.DateTimeFormat loads ICU's
  // calendar and zone data, ~8 MB that a server which never formats a local time then holds.
  if (timezone === undefined || timezone === 'UTC') return;
  try {
    new Intl.DateTimeFormat('en', { timeZone: timezone });
  } catch {
    throw validationError(`"${timezone}" is not a valid time zone.`, 'timezone', 'invalid_choice');
  }
}
