/** The API objects the app reads, as the management API sends them. */

export type Level = 1 | 8 | 15;
export const LEVEL_NAMES: Record<Level, string> = { 1: 'Member', 8: 'Admin', 15: 'Owner' };
export const ADMIN: Level = 8;
export const OWNER: Level = 15;

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface UserBasic {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
}

export interface Me extends UserBasic {
  date_joined: string;
  has_password: boolean;
  organizations: { id: string; name: string; membership_level: Level }[];
}

export interface Project {
  id: number;
  uuid: string;
  organization: string;
  api_token: string;
  name: string;
  timezone: string;
  anonymize_ips: boolean;
  created_at: string;
  effective_membership_level: Level;
}

export interface EventPerson {
  is_identified: boolean;
  distinct_ids: string[];
  properties: Record<string, unknown>;
}

export interface StoredEvent {
  id: string;
  distinct_id: string;
  event: string;
  timestamp: string;
  properties: Record<string, unknown>;
  person: EventPerson | null;
  elements_chain: string;
}

export interface PropertyFilter {
  key: string;
  value?: unknown;
  operator?: string;
  type?: string;
  group_type_index?: number | null;
}

export interface FlagCondition {
  properties?: PropertyFilter[];
  rollout_percentage?: number | null;
  variant?: string | null;
}

export interface FlagVariant {
  key: string;
  name?: string | null;
  rollout_percentage: number;
}

export interface FlagFilters {
  groups: FlagCondition[];
  multivariate?: { variants: FlagVariant[] } | null;
  payloads?: Record<string, unknown>;
  aggregation_group_type_index?: number | null;
}

export interface FeatureFlag {
  id: number;
  key: string;
  name: string;
  filters: FlagFilters;
  active: boolean;
  deleted: boolean;
  ensure_experience_continuity: boolean;
  version: number;
  created_at: string;
  updated_at: string;
  created_by: UserBasic | null;
  is_simple_flag: boolean;
  rollout_percentage: number | null;
}

export interface EventDefinition {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  created_at: string;
  last_seen_at: string;
}

export type PropertyType = 'DateTime' | 'String' | 'Numeric' | 'Boolean';

export interface PropertyDefinition {
  id: string;
  name: string;
  type: 1 | 2 | 3;
  property_type: PropertyType | null;
  is_numerical: boolean;
  tags: string[];
}

export interface Member {
  id: string;
  user: UserBasic;
  level: Level;
  joined_at: string;
}

export interface Invite {
  id: string;
  target_email: string;
  level: Level;
  created_at: string;
  is_expired: boolean;
  invite_link?: string;
}

export interface PersonalKey {
  id: string;
  label: string;
  mask_value: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
  value?: string;
}

/** A person as the persons API sends one (docs/persons.md). */
export interface Person {
  type: 'person';
  id: number;
  uuid: string;
  name: string;
  distinct_ids: string[];
  properties: Record<string, unknown>;
  created_at: string;
  is_identified: boolean;
}

/** The persons list pages by offset, without a count. */
export interface CursorPage<T> {
  next: string | null;
  previous: string | null;
  results: T[];
}

export interface PersonDeletion {
  id: number;
  person_uuid: string;
  status: 'pending' | 'finished' | 'purged';
  delete_events: boolean;
  requested_at: string;
  finished_at: string | null;
  purged_at: string | null;
  status_url: string;
}

export interface GroupType {
  group_type: string;
  group_type_index: number;
  name_singular: string | null;
  name_plural: string | null;
}

export interface Group {
  group_type_index: number;
  group_key: string;
  group_properties: Record<string, unknown>;
  created_at: string;
}

/** A cohort as the cohorts API sends one (docs/cohorts.md). */
export interface Cohort {
  id: number;
  name: string;
  description: string;
  filters: { properties?: unknown } | null;
  is_static: boolean;
  deleted: boolean;
  count: number | null;
  is_calculating: boolean;
  last_calculation: string | null;
  errors_calculating: number;
  last_error: string | null;
  created_at: string;
}

export type StepMatching = 'contains' | 'exact' | 'regex';

/** One step of an action: an event matches when every field given holds (docs/actions.md). */
export interface ActionStep {
  event?: string | null;
  url?: string | null;
  url_matching?: StepMatching | null;
  text?: string | null;
  text_matching?: StepMatching | null;
  href?: string | null;
  href_matching?: StepMatching | null;
  selector?: string | null;
  tag_name?: string | null;
  properties?: PropertyFilter[] | null;
}

export interface Action {
  id: number;
  name: string;
  description: string;
  tags: string[];
  steps: ActionStep[];
  created_at: string;
  last_calculated_at: string | null;
  deleted: boolean;
}
