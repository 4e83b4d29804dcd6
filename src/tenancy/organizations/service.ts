/** The organizations a user belongs to, each with its projects. */
import type { Membership, Organization, Page, PageOf, Project, TenancyStore } from '../../store/types.js';

export interface OrganizationView {
  organization: Organization;
  membership: Membership;
  projects: Project[];
}

export class Organizations {
  constructor(private readonly tenancy: TenancyStore) {}

  /** A page of the user's organizations, oldest membership first. */
  async visibleTo(userId: number, page: Page): Promise<PageOf<OrganizationView>> {
    const memberships = await this.tenancy.listMembershipsOfUser(userId);
    const results = [];
    for (const membership of memberships.slice(page.offset, page.offset + page.limit)) {
      const organization = await this.tenancy.getOrganization(membership.organization_id);
      if (organization) results.push(await this.view(organization, membership));
    }
    return { count: memberships.length, results };
  }

  async view(organization: Organization, membership: Membership): Promise<OrganizationView> {
    return { organization, membership, projects: await this.tenancy.listProjectsOfOrganization(organization.id) };
  }
}
