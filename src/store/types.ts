/**
 * The two storage interfaces. Callers only see these; the engines behind them
 * (SQLite + DuckDB embedded today, PostgreSQL + ClickHouse later) are chosen once at start-up.
 */
import type { RateWindows } from '../util/rate-windows.js';
import type { JsonObject } from '../kernel/json.js';
import type { FeatureFlag } from '../flags/engine/types.js';
import type { CohortDefinition } from '../flags/engine/cohorts.js';
import type { SqlDialect } from '../hogql/dialect.js';

// ---------------------------------------------------------------------------------------------
// Tenancy: organizations, users, memberships, projects, personal API keys
// ---------------------------------------------------------------------------------------------

export interface Organization {
  id: string;
  name: string;
  created_at: string;
}

export interface User {
  id: number;
  uuid: string;
  distinct_id: string;
  first_name: string;
  last_name: string;
  email: string;
  is_email_verified: boolean;
  created_at: string;
}

export type MembershipLevel = 1 | 8 | 15;

export interface Membership {
  id: string;
  organization_id: string;
  user_id: number;
  level: MembershipLevel;
  joined_at: string;
  updated_at: string;
}

export interface Project {
  id: number;
  uuid: string;
  organization_id: string;
  name: string;
  api_token: string;
  timezone: string;
  anonymize_ips: boolean;
  /** First day of a week bucket: 0 Sunday, 1 Monday; null means Sunday (PostHog's default). */
  week_start_day: 0 | 1 | null;
  /** Property filters a query ANDs when it sets filterTestAccounts (PostHog's project setting). */
  test_account_filters: unknown[];
  created_at: string;
}

/** The project settings a PATCH may change. */
export interface ProjectPatch {
  name?: string;
  timezone?: string;
  anonymize_ips?: boolean;
  week_start_day?: 0 | 1 | null;
  test_account_filters?: unknown[];
}

export interface PersonalApiKey {
  id: string;
  user_id: number;
  label: string;
  mask_value: string;
  /** null = unrestricted (legacy keys); otherwise e.g. ["*"], ["object:read"]. */
  scopes: string[] | null;
  created_at: string;
  last_used_at: string | null;
}

export interface OrganizationInvite {
  id: string;
  organization_id: string;
  target_email: string;
  level: MembershipLevel;
  created_by: number | null;
  created_at: string;
}

/** A page request and its answer; `count` is the total before paging. */
export interface Page {
  limit: number;
  offset: number;
}

export interface PageOf<T> {
  count: number;
  results: T[];
}

export interface TenancyStore {
  createOrganization(name: string): Promise<Organization>;
  createUser(input: { email: string; first_name?: string; last_name?: string }): Promise<User>;
  addMembership(organizationId: string, userId: number, level: MembershipLevel): Promise<Membership>;
  createProject(input: { organizationId: string; name: string; apiToken: string }): Promise<Project>;
  /** Stores only the sha256 of `value`; returns the stored record (never the value). */
  createPersonalApiKey(input: { userId: number; label: string; value: string; scopes: string[] | null }): Promise<PersonalApiKey>;

  countOrganizations(): Promise<number>;
  getOrganization(id: string): Promise<Organization | null>;
  getUser(id: number): Promise<User | null>;
  getUserByEmail(email: string): Promise<User | null>;
  getProject(id: number): Promise<Project | null>;
  /** Project by its public api_token (cached by callers on the hot path). */
  getProjectByToken(token: string): Promise<Project | null>;
  /** Key record and its user by the sha256 hex of the presented key. */
  findPersonalApiKeyByHash(sha256Hex: string): Promise<{ key: PersonalApiKey; user: User } | null>;
  listProjects(): Promise<Project[]>;
  /** Memberships of a user, oldest first (the first one is the user's "current" organization). */
  listMembershipsOfUser(userId: number): Promise<Membership[]>;
  getMembership(organizationId: string, userId: number): Promise<Membership | null>;
  listProjectsOfOrganization(organizationId: string): Promise<Project[]>;
  touchPersonalApiKey(id: string, at: string): Promise<void>;

  getUserByUuid(uuid: string): Promise<User | null>;
  /** A user's keys, newest first. */
  listPersonalApiKeys(userId: number): Promise<PersonalApiKey[]>;
  /** False when the key does not exist or belongs to someone else. */
  deletePersonalApiKey(userId: number, id: string): Promise<boolean>;
  /** Members with their users, newest membership first. */
  listMembers(organizationId: string, page: Page): Promise<PageOf<{ membership: Membership; user: User }>>;
  setMembershipLevel(organizationId: string, userId: number, level: MembershipLevel): Promise<Membership | null>;
  removeMembership(organizationId: string, userId: number): Promise<boolean>;
  /** Replaces any pending invite for the same e-mail in that organization; `tokenHash` is the sha256 of its link's secret. */
  createInvite(input: { organizationId: string; email: string; level: MembershipLevel; createdBy: number; tokenHash: string }): Promise<OrganizationInvite>;
  listInvites(organizationId: string, page: Page): Promise<PageOf<OrganizationInvite>>;
  deleteInvite(organizationId: string, id: string): Promise<boolean>;
  /** The pending invite of an e-mail (at most one: a new invite replaces the old). */
  findInvite(organizationId: string, email: string): Promise<OrganizationInvite | null>;
  updateProject(id: number, patch: ProjectPatch): Promise<Project | null>;
}

// ---------------------------------------------------------------------------------------------
// Accounts: passwords, browser sessions and invite links (values are only ever stored hashed)
// ---------------------------------------------------------------------------------------------

export interface BrowserSession {
  user_id: number;
  created_at: string;
  expires_at: string;
}

/** Who takes up an invite: a user who already exists (and proved it), or a new one. */
export type InviteJoiner = { userId: number } | { firstName: string; passwordHash: string };

export interface AccountStore {
  /** The stored password hash, or null when the user has none (signs in only with keys). */
  passwordHashOf(userId: number): Promise<string | null>;
  setPasswordHash(userId: number, hash: string): Promise<void>;
  updateProfile(userId: number, patch: { first_name?: string; last_name?: string }): Promise<User | null>;
  createSession(input: { userId: number; tokenHash: string; expiresAt: string }): Promise<BrowserSession>;
  /** A session not expired at `now`, with its user. */
  findSession(tokenHash: string, now: string): Promise<{ session: BrowserSession; user: User } | null>;
  deleteSession(tokenHash: string): Promise<void>;
  /** Signs a user out everywhere, except the session `keepTokenHash` if given. */
  deleteSessionsOfUser(userId: number, keepTokenHash?: string): Promise<void>;
  deleteExpiredSessions(now: string): Promise<number>;
  /** The pending invite whose link secret hashes to `tokenHash`, with its organization. */
  findInviteByToken(tokenHash: string): Promise<{ invite: OrganizationInvite; organization: Organization } | null>;
  /**
   * Takes the invite once, atomically: removes it, creates the user when new, and makes the
   * user a member at the invite's level (an existing membership is kept). Null when the invite
   * is gone (used or cancelled meanwhile).
   */
  redeemInvite(tokenHash: string, joiner: InviteJoiner): Promise<{ user: User; membership: Membership; organization: Organization } | null>;
}

// ---------------------------------------------------------------------------------------------
// Definitions: what the management API reads and edits (ingestion writes them through IngestStore)
// ---------------------------------------------------------------------------------------------

export type PropertyValueType = 'DateTime' | 'String' | 'Numeric' | 'Boolean';

export interface PropertyDefinition {
  id: string;
  project_id: number;
  name: string;
  /** 1 event, 2 person, 3 group. */
  type: 1 | 2 | 3;
  group_type_index: number | null;
  property_type: PropertyValueType | null;
  is_numerical: boolean;
  tags: string[];
  /** Only when the list was asked about `event_names`; null otherwise. */
  is_seen_on_filtered_events: boolean | null;
}

export interface PropertyDefinitionQuery extends Page {
  projectId: number;
  type: 1 | 2 | 3;
  groupTypeIndex: number | null;
  /** Every word must occur in the name (case-insensitive). */
  searchWords: string[];
  /** Exact names to keep (null = all). */
  names: string[] | null;
  excludedNames: string[];
  /** Event names for `is_seen_on_filtered_events` (null = not asked). */
  eventNames: string[] | null;
  /** Keep only properties seen with `eventNames`. */
  onlySeenWithEvents: boolean;
  isFeatureFlag: boolean | null;
  isNumerical: boolean | null;
}

export interface PropertyDefinitionPatch {
  name?: string;
  property_type?: PropertyValueType;
  is_numerical?: boolean;
  tags?: string[];
}

export interface EventDefinition {
  id: string;
  project_id: number;
  name: string;
  description: string | null;
  tags: string[];
  created_at: string;
  last_seen_at: string;
}

export interface EventDefinitionQuery extends Page {
  projectId: number;
  searchWords: string[];
}

/** `name_taken`: a rename would collide with another definition of the same kind. */
/** `inconsistent_type`: the result would be numerical without being `Numeric`, or the reverse. */
export type DefinitionUpdate<T> = T | 'not_found' | 'name_taken' | 'inconsistent_type';

export interface DefinitionStore {
  listProperties(query: PropertyDefinitionQuery): Promise<PageOf<PropertyDefinition>>;
  getProperty(projectId: number, id: string): Promise<PropertyDefinition | null>;
  updateProperty(projectId: number, id: string, patch: PropertyDefinitionPatch): Promise<DefinitionUpdate<PropertyDefinition>>;
  deleteProperty(projectId: number, id: string): Promise<boolean>;
  /** For each event name: was `property` ever seen on it. */
  seenTogether(projectId: number, eventNames: string[], property: string): Promise<Record<string, boolean>>;
  /** Declared value types of the named event (1) or person (2) properties; untyped names are left out. */
  propertyTypes(projectId: number, type: 1 | 2, names: string[]): Promise<Map<string, PropertyValueType>>;
  listEvents(query: EventDefinitionQuery): Promise<PageOf<EventDefinition>>;
  getEvent(projectId: number, id: string): Promise<EventDefinition | null>;
  updateEvent(projectId: number, id: string, patch: { description?: string | null; tags?: string[] }): Promise<EventDefinition | null>;
  deleteEvent(projectId: number, id: string): Promise<boolean>;
}

// ---------------------------------------------------------------------------------------------
// Feature flags: definitions for the management API, and what one evaluation reads
// ---------------------------------------------------------------------------------------------

export interface StoredFlag extends FeatureFlag {
  project_id: number;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

/** The fields the management API may write. */
export type FlagWrite = Pick<FeatureFlag, 'key' | 'name' | 'filters' | 'active' | 'deleted' | 'ensure_experience_continuity'>;

export interface FlagListQuery extends Page {
  projectId: number;
  /** Every word must occur in the key or the name (case-insensitive). */
  searchWords: string[];
  active: boolean | null;
}

/** `key_taken`: another non-deleted flag of the project has that key. */
export type FlagUpdate = StoredFlag | 'not_found' | 'key_taken';

export interface FlagEvaluationRequest {
  projectId: number;
  distinctId: string;
  /** Group type name → group key, as the request sent them. */
  groups: Record<string, string>;
  /** Experience continuity: set only when the project has such flags. */
  continuity: { flagKeys: string[]; anonDistinctId: string | null } | null;
  /** Read the person's stored cohort memberships (flags reference static or behavioural cohorts). */
  cohortMembership?: boolean;
}

export interface FlagEvaluationInputs {
  /** The stored person of the distinct id, or null when there is none. */
  personProperties: JsonObject | null;
  /** Group type index (as a string) → name; empty when the request named no groups. */
  groupTypeMapping: Record<string, string>;
  /** Group type name → stored properties, for the request's groups that exist. */
  groupProperties: Record<string, JsonObject>;
  /** Flag key → hash key, for experience-continuity flags. */
  hashKeyOverrides: Record<string, string>;
  /** The cohorts whose stored membership holds the person; set when `cohortMembership` was asked. */
  cohortIds?: readonly number[];
}

export interface FlagStore {
  /** Every non-deleted flag of a project (active or not), oldest first. */
  list(projectId: number): Promise<StoredFlag[]>;
  /** Non-deleted flags, newest first. */
  page(query: FlagListQuery): Promise<PageOf<StoredFlag>>;
  /** One flag, soft-deleted ones included (so they can be restored). */
  get(projectId: number, id: number): Promise<StoredFlag | null>;
  /** version 1; a soft-deleted flag with the same key is removed for good first. */
  create(projectId: number, createdBy: number | null, flag: FlagWrite): Promise<StoredFlag | 'key_taken'>;
  /** Applies the patch and bumps `version`. */
  update(projectId: number, id: number, patch: Partial<FlagWrite>): Promise<FlagUpdate>;
  /** Hard delete. */
  remove(projectId: number, id: number): Promise<boolean>;
  /** Group type index (as a string) → name. */
  groupTypeMapping(projectId: number): Promise<Record<string, string>>;
  /**
   * Everything one evaluation reads, in one call: stored person and group properties, and
   * hash-key overrides (first storing the anon id as the override where none exists yet).
   */
  prepareEvaluation(request: FlagEvaluationRequest): Promise<FlagEvaluationInputs>;
  /** The project's non-deleted cohorts as flags read them. */
  cohortDefinitions(projectId: number): Promise<CohortDefinition[]>;
}

// ---------------------------------------------------------------------------------------------
// Ingestion: what one flush reads and writes in the metadata store
// ---------------------------------------------------------------------------------------------

export interface PersonRecord {
  uuid: string;
  project_id: number;
  properties: JsonObject;
  is_identified: boolean;
  created_at: string;
  version: number;
}

/** What the pipeline needs to know before processing a batch. */
export interface IngestSnapshotRequest {
  /** project id → distinct ids mentioned by the batch (event ids, anon ids, aliases). */
  distinctIds: Map<number, Set<string>>;
  /** project id → uuids of the batch's events, for de-duplication. */
  eventUuids: Map<number, string[]>;
  /** project id → "<group type name>\u0000<group key>" of groups the batch updates. */
  groups: Map<number, Set<string>>;
}

/** How IngestSnapshot.groups keys a group: its type index and key. */
export const groupKeyOf = (index: number, key: string) => `${index}\u0000${key}`;

/** A node's flush: flush sequences are each node's own. */
export interface FlushRef {
  node: string;
  flushSeq: number;
}

export interface IngestSnapshot {
  /** project id → distinct id → person uuid. */
  distinctIdToPerson: Map<number, Map<string, string>>;
  /** person uuid → person (for every person referenced above). */
  persons: Map<string, PersonRecord>;
  /** project id → uuids already stored. */
  existingUuids: Map<number, Set<string>>;
  /**
   * From a store that several nodes write, when some uuids are already stored (a redelivered
   * batch, plan/redelivered.ts): the flush that first committed each (`${projectId}:${uuid}`), and
   * for the batch's distinct ids (`${projectId}:${distinctId}`) the person deletions that took
   * them, as each deletion's last flush per node before it.
   */
  firstCommits?: Map<string, FlushRef>;
  deletionsOfDistinctIds?: Map<string, Record<string, number>[]>;
  /** project id → group type name → index. */
  groupTypes: Map<number, Map<string, number>>;
  /** project id → groupKeyOf(index, key) → group properties. */
  groups: Map<number, Map<string, { properties: JsonObject; created_at: string }>>;
  /** From a store that several nodes write: what it read of the persons, for `IngestChanges.personsRead`. */
  personsRead?: PersonRead[];
}

export interface PropertyDefinitionWrite {
  project_id: number;
  name: string;
  /** 1 event, 2 person, 3 group. */
  type: 1 | 2 | 3;
  group_type_index: number | null;
  property_type: 'DateTime' | 'String' | 'Numeric' | 'Boolean' | null;
}

export interface IngestChanges {
  flushSeq: number;
  upsertPersons: PersonRecord[];
  deletePersons: { project_id: number; uuid: string }[];
  /** Merges: every distinct id of `from_person_uuid` moves to `to_person_uuid` (applied first). */
  reassignDistinctIds: { project_id: number; from_person_uuid: string; to_person_uuid: string }[];
  setDistinctIds: { project_id: number; distinct_id: string; person_uuid: string }[];
  newGroupTypes: { project_id: number; group_type: string; group_type_index: number }[];
  upsertGroups: { project_id: number; group_type_index: number; group_key: string; properties: JsonObject; created_at: string }[];
  propertyDefinitions: PropertyDefinitionWrite[];
  eventDefinitions: { project_id: number; name: string; last_seen_at: string }[];
  eventProperties: { project_id: number; event: string; property: string }[];
  eventUuids: { project_id: number; uuid: string }[];
  /**
   * Persons whose mirror rows the event store copies again although nothing of theirs changed:
   * those of events written again after a redelivery (plan/redelivered.ts). Metadata stores
   * ignore it.
   */
  refreshPersons?: { project_id: number; uuid: string }[];
  /**
   * What planning read of the persons: each distinct id's person and that person's version
   * (null: none). A store that several nodes write refuses the changes with
   * PersonsChangedError when any of them differs at apply time, so a flush planned on a
   * person another node has changed since is planned again instead of overwriting it.
   */
  personsRead?: PersonRead[];
}

export interface PersonRead {
  project_id: number;
  distinct_id: string;
  person_uuid: string | null;
  version: number | null;
}

/**
 * The current rows of some persons in a metadata store that nodes share, with a version that
 * orders reads: a read with a higher version never carries older rows (persons-mirror writes of
 * several nodes then agree whatever order they arrive in).
 */
export interface PersonMirrorState {
  version: number;
  persons: PersonRecord[];
  distinctIds: { project_id: number; distinct_id: string; person_uuid: string }[];
}

export interface IngestStore {
  loadSnapshot(request: IngestSnapshotRequest): Promise<IngestSnapshot>;
  /**
   * Applies every change of one flush atomically and records `flushSeq` as applied. It need not
   * be durable yet: the flush log holds the flush until `makeDurable` has run.
   */
  applyChanges(changes: IngestChanges): Promise<void>;
  /** Makes every change applied so far durable (before the flush log lets go of them). */
  makeDurable(): Promise<void>;
  /** Highest flush sequence applied to this store (0 when none). */
  committedFlushSeq(): Promise<number>;
  /** Every node's highest applied flush, in a store that several nodes share (absent otherwise). */
  committedFlushSeqs?(): Promise<Map<string, number>>;
  /** The current rows of these persons and their distinct ids, in a store that several nodes share (absent otherwise). */
  personMirrorState?(persons: { project_id: number; uuid: string }[]): Promise<PersonMirrorState>;
  /**
   * Repair of a data directory written before the flush log existed, where a crash between the
   * two commits left flushes the event store never got: forget their uuids so the retries are stored.
   */
  forgetUuidsAfter(flushSeq: number): Promise<void>;
  /** Retention: forgets the uuids of deleted events (a retry of one of them is stored again). */
  forgetUuids(uuids: UuidsByProject): Promise<void>;
  /** All persons and distinct ids, to rebuild the event store's person mirror after a crash. */
  allPersons(): AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>;
  /** The current person of each distinct id with all of its distinct ids (the events API shows these). */
  personsOf(projectId: number, distinctIds: string[]): Promise<Map<string, { person: PersonRecord; distinct_ids: string[] }>>;
}

// ---------------------------------------------------------------------------------------------
// Persons as the management API sees them, their deletion, and the activity log
// ---------------------------------------------------------------------------------------------

/** A person with its stable integer id and every distinct id it has now. */
export interface StoredPerson extends PersonRecord {
  id: number;
  distinct_ids: string[];
}

export interface PersonListQuery {
  projectId: number;
  /** Exact distinct id. */
  distinctId: string | null;
  /** Exact `email` property. */
  email: string | null;
  /** Substring of the email or name properties, or an exact distinct id. */
  search: string | null;
  /** Extra test on each person's properties (person property filters), applied in order. */
  matches: ((properties: JsonObject) => boolean) | null;
  limit: number;
  offset: number;
}

export interface PersonDeletion {
  id: number;
  project_id: number;
  person_uuid: string;
  /** Emptied once the deletion has finished (the queue keeps no personal data afterwards). */
  distinct_ids: string[];
  delete_events: boolean;
  /** Every flush up to this one was committed before the deletion: their events are the person's to erase. */
  after_flush_seq: number;
  /**
   * With a metadata store several nodes share: per node, the last flush it had committed when the
   * deletion was made (this node's is `after_flush_seq`). Null where one node writes the events.
   */
  flushes_before: Record<string, number> | null;
  requested_by: number | null;
  requested_at: string;
  finished_at: string | null;
  /** When the event file was compacted after it: the events are gone from its bytes too. */
  purged_at: string | null;
}

export interface ActivityEntry {
  id: number;
  project_id: number;
  scope: string;
  item_id: string;
  activity: string;
  user_id: number | null;
  detail: JsonObject;
  created_at: string;
}

export interface PersonStore {
  /** Newest first (created_at, then id), one page plus whether more follow. */
  list(query: PersonListQuery): Promise<{ results: StoredPerson[]; more: boolean }>;
  /** By integer id or uuid. */
  get(projectId: number, idOrUuid: number | string): Promise<StoredPerson | null>;
  /** The uuids of these integer ids or uuids that exist (unknown ones left out). */
  resolve(projectId: number, idsOrUuids: (number | string)[]): Promise<string[]>;
  /** The persons owning these distinct ids. */
  uuidsOfDistinctIds(projectId: number, distinctIds: string[]): Promise<string[]>;
  /**
   * Removes the persons, their distinct ids and flag overrides, and queues their deletion in
   * the event store, in one transaction; logs each in the activity log. Returns the queued deletions.
   */
  delete(input: { projectId: number; uuids: string[]; deleteEvents: boolean; afterFlushSeq: number; userId: number | null }): Promise<PersonDeletion[]>;
  /**
   * Gives every distinct id of the person but `mainDistinctId` (default: its first) a new person
   * of its own, with no properties; logged in the activity log. Returns the distinct ids moved.
   */
  split(input: { projectId: number; uuid: string; mainDistinctId: string | null; userId: number | null }): Promise<string[] | 'not_found' | 'unknown_distinct_id'>;
  /** Deletions whose event-store part has not finished (resumed at start-up). */
  openDeletions(): Promise<PersonDeletion[]>;
  deletion(projectId: number, id: number): Promise<PersonDeletion | null>;
  finishDeletion(id: number, at: string): Promise<void>;
  /** Finished deletions whose file compaction has not run yet. */
  unpurgedDeletions(): Promise<PersonDeletion[]>;
  /**
   * With several nodes: finished deletions of events (any node's) that recorded a flush of this
   * node later than `storedFlushSeq`, each with that flush. They erased before those flushes
   * reached the shared event store (the node died in between), so the node erases again once its
   * restart has written them.
   */
  deletionsAheadOf?(storedFlushSeq: number): Promise<Array<{ deletion: PersonDeletion; ownFlushSeq: number }>>;
  /** The event file was compacted after these deletions finished. */
  markPurged(ids: number[], at: string): Promise<void>;
  activity(projectId: number, scope: string, itemId: string | null, limit: number, offset: number): Promise<{ count: number; results: ActivityEntry[] }>;
}

// ---------------------------------------------------------------------------------------------
// Cohorts: definitions and their materialised membership
// ---------------------------------------------------------------------------------------------

export interface StoredCohort {
  id: number;
  project_id: number;
  name: string;
  description: string;
  /** PostHog's `{"properties": PropertyGroup}` for dynamic cohorts; `{}` for static ones. */
  filters: JsonObject;
  is_static: boolean;
  deleted: boolean;
  /** Members after the last calculation or upload; null before the first. */
  count: number | null;
  /** Bumped by each definition change; a calculation of an older version is not stored. */
  version: number;
  is_calculating: boolean;
  last_calculation: string | null;
  errors_calculating: number;
  last_error: string | null;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export interface CohortWrite {
  name: string;
  description: string;
  filters: JsonObject;
  is_static: boolean;
  deleted: boolean;
}

export interface CohortStore {
  /** Non-deleted cohorts of a project (or every project's, for the schedule), oldest first. */
  list(projectId: number | null): Promise<StoredCohort[]>;
  get(projectId: number, id: number): Promise<StoredCohort | null>;
  /** With its first members (static cohorts), in one transaction. */
  create(projectId: number, createdBy: number | null, cohort: CohortWrite, members?: string[]): Promise<StoredCohort>;
  /** Applies the patch; a change of `filters` bumps `version`. */
  update(projectId: number, id: number, patch: Partial<CohortWrite>): Promise<StoredCohort | null>;
  /** Marks a calculation started (`is_calculating`) and says which version it computes. */
  startCalculation(projectId: number, id: number): Promise<number | null>;
  /**
   * Replaces the membership with `personUuids` (those that still exist) and records count and time, in one transaction,
   * unless the definition changed since `version` (then only `is_calculating` is cleared). Returns whether stored.
   */
  finishCalculation(projectId: number, id: number, version: number, personUuids: Iterable<string>): Promise<boolean>;
  failCalculation(projectId: number, id: number, error: string): Promise<void>;
  /**
   * Runs the scheduled recalculation unless another node sharing the store runs it now (then
   * null, and this node skips that round): nodes take turns instead of computing everything twice.
   */
  asScheduler<T>(work: () => Promise<T>): Promise<T | null>;
  /** Adds persons to a static cohort (known uuids only); returns the new count. */
  addMembers(projectId: number, id: number, personUuids: string[]): Promise<number>;
  removeMember(projectId: number, id: number, personUuid: string): Promise<boolean>;
  /** Members as uuids, a page at a time, in uuid order. */
  members(projectId: number, id: number, page: Page): Promise<PageOf<string>>;
  /** The non-deleted cohorts whose stored membership holds the person. */
  cohortsOf(projectId: number, personUuid: string): Promise<StoredCohort[]>;
  /** Every member of the cohort (for calculations that reference it). */
  memberSet(projectId: number, id: number): Promise<Set<string>>;
  /** Persons of the project a page at a time, in uuid order, with properties (calculations). */
  personPage(projectId: number, afterUuid: string | null, limit: number): Promise<{ uuid: string; properties: JsonObject }[]>;
  /** uuids of the persons with these distinct ids / emails (exact, emails case-insensitive). */
  personsByDistinctId(projectId: number, distinctIds: string[]): Promise<Map<string, string>>;
  personsByEmail(projectId: number, emails: string[]): Promise<Map<string, string>>;
}

// ---------------------------------------------------------------------------------------------
// Groups as the management API sees them
// ---------------------------------------------------------------------------------------------

export interface StoredGroup {
  group_type_index: number;
  group_key: string;
  properties: JsonObject;
  created_at: string;
}

export interface GroupType {
  group_type: string;
  group_type_index: number;
  name_singular: string | null;
  name_plural: string | null;
}

/** Where a groups page starts: after this group in the newest-first order. */
export interface GroupCursor {
  created_at: string;
  group_key: string;
}

export interface GroupStore {
  /** Newest first (created_at, then key descending); `search`: substring of the key or the `name` property. */
  list(query: { projectId: number; groupTypeIndex: number; search: string | null; after: GroupCursor | null; limit: number }): Promise<{ results: StoredGroup[]; more: boolean }>;
  find(projectId: number, groupTypeIndex: number, groupKey: string): Promise<StoredGroup | null>;
  /** The groups of the type among `keys` (keys without a group are left out), in no particular order. */
  ofKeys(projectId: number, groupTypeIndex: number, keys: readonly string[]): Promise<StoredGroup[]>;
  /**
   * Group key → the property's value as text (as the event store reads JSON text: numbers in
   * decimal, booleans `true`/`false`, objects and lists as JSON) for at most `limit` groups of the
   * type that have the property (JSON null counts as not having it).
   */
  propertyOfGroups(projectId: number, groupTypeIndex: number, key: string, limit: number): Promise<Map<string, string>>;
  types(projectId: number): Promise<GroupType[]>;
  /** Sets the display names given (undefined leaves one as it is); null when there is no such type. */
  renameType(projectId: number, groupTypeIndex: number, names: { name_singular?: string | null; name_plural?: string | null }): Promise<GroupType | null>;
  /** Property names of each group type with the number of groups that have them, most common first. */
  propertyNames(projectId: number): Promise<Map<number, { name: string; count: number }[]>>;
}

// ---------------------------------------------------------------------------------------------
// The metadata store and the event store
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Saved insights and dashboards (query-api.md §3)
// ---------------------------------------------------------------------------------------------

export interface StoredInsight {
  id: number;
  project_id: number;
  /** Public 8-character id (PostHog's short_id), unique across the installation. */
  short_id: string;
  name: string;
  description: string;
  /** The saved query node (InsightVizNode, DataVisualizationNode, or a bare query). */
  query: JsonObject;
  favorited: boolean;
  tags: string[];
  deleted: boolean;
  created_by: number | null;
  created_at: string;
  last_modified_at: string;
  last_modified_by: number | null;
}

export type InsightWrite = Pick<StoredInsight, 'name' | 'description' | 'query' | 'favorited' | 'tags' | 'deleted'>;

export interface InsightListQuery extends Page {
  projectId: number;
  searchWords: string[];
  favorited: boolean | null;
  /** Only insights with a live tile on this dashboard. */
  dashboardId: number | null;
}

/** Dashboard-wide overrides of every tile's query (PostHog's DashboardFilter). */
export interface DashboardFilters {
  date_from?: string | null;
  date_to?: string | null;
  properties?: JsonObject[] | null;
}

export interface StoredDashboard {
  id: number;
  project_id: number;
  name: string;
  description: string;
  pinned: boolean;
  filters: DashboardFilters;
  tags: string[];
  deleted: boolean;
  created_by: number | null;
  created_at: string;
  last_modified_at: string;
}

export type DashboardWrite = Pick<StoredDashboard, 'name' | 'description' | 'pinned' | 'filters' | 'tags' | 'deleted'>;

/** Where a tile sits in the grid, per breakpoint (`sm`, `xs`): {x, y, w, h}. */
export type TileLayouts = Record<string, { x: number; y: number; w: number; h: number }>;

export interface StoredTile {
  id: number;
  dashboard_id: number;
  insight_id: number;
  layouts: TileLayouts;
  color: string | null;
  deleted: boolean;
}

export type TileUpdate = Partial<Pick<StoredTile, 'layouts' | 'color' | 'deleted'>>;

export interface DashboardStore {
  pageInsights(query: InsightListQuery): Promise<PageOf<StoredInsight>>;
  getInsight(projectId: number, id: number): Promise<StoredInsight | null>;
  getInsightByShortId(projectId: number, shortId: string): Promise<StoredInsight | null>;
  createInsight(projectId: number, userId: number, insight: InsightWrite): Promise<StoredInsight>;
  updateInsight(projectId: number, id: number, userId: number, patch: Partial<InsightWrite>): Promise<StoredInsight | null>;

  pageDashboards(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredDashboard>>;
  getDashboard(projectId: number, id: number): Promise<StoredDashboard | null>;
  createDashboard(projectId: number, userId: number, dashboard: DashboardWrite): Promise<StoredDashboard>;
  updateDashboard(projectId: number, id: number, patch: Partial<DashboardWrite>): Promise<StoredDashboard | null>;

  /** A dashboard's tiles, deleted ones included, in id order. */
  tilesOfDashboard(dashboardId: number): Promise<StoredTile[]>;
  /** An insight's tiles, deleted ones included. */
  tilesOfInsight(insightId: number): Promise<StoredTile[]>;
  /** Puts the insight on the dashboard (restores a deleted tile) below the tiles already there. */
  placeTile(dashboardId: number, insightId: number): Promise<StoredTile>;
  updateTile(dashboardId: number, tileId: number, patch: TileUpdate): Promise<StoredTile | null>;
}

// ---------------------------------------------------------------------------------------------
// Actions: named combinations of event matchers (PostHog's Action and ActionStep)
// ---------------------------------------------------------------------------------------------

export type StepMatching = 'contains' | 'regex' | 'exact';

/** One way an event can match an action; every field given must hold (null = not checked). */
export interface ActionStep {
  event: string | null;
  /** Property filters, as the events API and insights take them. */
  properties: JsonObject[];
  url: string | null;
  url_matching: StepMatching | null;
  text: string | null;
  text_matching: StepMatching | null;
  href: string | null;
  href_matching: StepMatching | null;
  /** A CSS selector an element of the autocapture chain must match. */
  selector: string | null;
  tag_name: string | null;
}

export interface StoredAction {
  id: number;
  project_id: number;
  name: string;
  description: string;
  tags: string[];
  steps: ActionStep[];
  deleted: boolean;
  created_by: number | null;
  created_at: string;
  updated_at: string;
}

export type ActionWrite = Pick<StoredAction, 'name' | 'description' | 'tags' | 'steps' | 'deleted'>;

export interface ActionStore {
  /** Live actions of the project by name, then id; `search` words must all occur in the name. */
  pageActions(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredAction>>;
  /** An action of the project (soft-deleted ones too), or null. */
  getAction(projectId: number, id: number): Promise<StoredAction | null>;
  createAction(projectId: number, userId: number, action: ActionWrite): Promise<StoredAction>;
  updateAction(projectId: number, id: number, patch: Partial<ActionWrite>): Promise<StoredAction | null>;
  /** A live action of the project with exactly this name, other than `exceptId`. */
  liveActionNamed(projectId: number, name: string, exceptId: number | null): Promise<StoredAction | null>;
}

/** A change that caches on other nodes must hear of. */
export type MetaChange = { kind: 'flags'; projectId: number } | { kind: 'projects' } | { kind: 'definitions' } | { kind: 'all' };

/** Tells every node sharing the metadata store of changes to what they keep in caches. */
export interface ChangeFeed {
  /** Every node's listeners hear it, this node's included. */
  publish(change: MetaChange): Promise<void>;
  /** `kind: 'all'` means some changes may have been missed (the connection was lost): forget everything. */
  subscribe(listener: (change: MetaChange) => void): void;
}

/**
 * Bulk reads and writes of whole tables, for `sightline export` / `import` (src/transfer/). Rows
 * are engine-neutral: the columns of store/transfer-tables.ts as the JSON values they mean.
 */
export interface MetaTransfer {
  /** Every row of one of the archive's tables, a page at a time, in primary-key order. */
  readTable(table: string, pageRows?: number): AsyncIterable<Record<string, unknown>[]>;
  /** Inserts rows as they are, ids included, in one transaction. */
  writeRows(table: string, rows: Record<string, unknown>[]): Promise<void>;
  /** Rows in each of the archive's tables. */
  rowCounts(): Promise<Record<string, number>>;
  /** After an import: ids drawn from now on follow the largest imported. */
  finishImport(): Promise<void>;
}

export interface MetaStore {
  /** Whole-table reads and writes for exports and imports. */
  readonly transfer: MetaTransfer;
  /** Only where several nodes share the store (PostgreSQL); absent for the embedded one. */
  readonly changes?: ChangeFeed;
  /** Rate limits' counters, where several nodes share the store (the embedded mode counts in memory). */
  readonly rateWindows?: RateWindows;
  readonly tenancy: TenancyStore;
  readonly ingest: IngestStore;
  readonly definitions: DefinitionStore;
  readonly flags: FlagStore;
  readonly accounts: AccountStore;
  /** The persons and groups APIs' and the saved insights' stores. */
  readonly persons: PersonStore;
  readonly groups: GroupStore;
  readonly dashboards: DashboardStore;
  readonly cohorts: CohortStore;
  readonly actions: ActionStore;
  /**
   * Runs the first start's setup so that nodes starting together on one store take turns (the
   * second finds the first's organization). Only where several nodes share the store.
   */
  firstStartInTurn?<T>(work: () => Promise<T>): Promise<T>;
  /** Health probe: true when the store answers. */
  ping(): Promise<boolean>;
  sizeBytes(): Promise<number>;
  /** For an idle server: gives back memory kept only for speed (SQLite's page cache). */
  releaseIdleMemory?(): void;
  close(): Promise<void>;
}

/** One event as the event store keeps it. */
export interface StoredEvent {
  project_id: number;
  uuid: string;
  event: string;
  distinct_id: string;
  person_id: string | null;
  timestamp: Date;
  created_at: Date;
  /** The properties as JSON text (written once, for the flush log and the event store). */
  properties_json: string;
  elements_chain: string;
  /** `$group_0` … `$group_4`, '' when absent. */
  groups: [string, string, string, string, string];
}

/** A printed, parameterised statement in the event store's SQL dialect (its `dialect` printed it). */
export interface EventQuery {
  sql: string;
  params: unknown[];
}

/** A flush as the flush log and the event store take it. */
export interface EncodedFlush {
  seq: number;
  /** How many events it holds. */
  events: number;
  /** The record, newline included (a Uint8Array once it crossed to a thread or process). */
  bytes: Uint8Array;
  /** Where the flush log holds the same bytes, once they are there (absent for flushes not logged). */
  logged?: FlushLocation;
}

/** A record's place in a flush log segment: the segment stays until the event store holds it. */
export interface FlushLocation {
  file: string;
  offset: number;
  length: number;
}

/**
 * How far the event store got: every flush up to `seq`, and the first `events` events of the
 * flush after it (a write may end inside a flush).
 */
/** A person's erasure from the event store: see EventStore.erasePerson. */
export interface PersonErasure {
  projectId: number;
  personUuid: string;
  distinctIds: string[];
  events: boolean;
  afterFlushSeq: number;
  /** Per node, its last flush before the deletion (PersonDeletion.flushes_before): an event store all nodes write erases each node's. */
  flushesBefore: Record<string, number> | null;
  keep: { person: PersonRecord; distinct_ids: string[] }[];
}

export interface EventStorePosition {
  seq: number;
  events: number;
}

/**
 * Consecutive flushes for one event-store write: the first taken from its `from`-th event, the
 * last up to (not including) its `to`-th.
 */
export interface EventSlice {
  flushes: EncodedFlush[];
  from: number;
  to: number;
  /** The last whole flush before the slice (the position's `seq` it starts from). */
  after: number;
}

/** Event uuids by project, as 32 hex digits. */
export type UuidsByProject = Map<number, string[]>;

export interface EventStore {
  /** The SQL the store speaks: queries are IR printed by this dialect (hogql/dialect.ts). */
  readonly dialect: SqlDialect;
  /**
   * Appends a slice's events, and applies the person-mirror changes of every flush whose first
   * event is in it, in one transaction; records the position reached.
   */
  write(slice: EventSlice): Promise<void>;
  /** Events per write that cost least (writes of a multiple of it are cheapest). */
  readonly writeUnit: number;
  /**
   * True when an event written again (same uuid and timestamp) is read once: ClickHouse's
   * ReplacingMergeTree read with FINAL. Ingestion then writes again the events of a redelivered
   * batch that the metadata store already has (their first writer may have died before the event
   * store got them).
   */
  readonly keepsOneRowPerUuid?: boolean;
  position(): Promise<EventStorePosition>;
  /** Every node's position (flush sequence held), in a store that several nodes share (absent otherwise). */
  storedFlushSeqs?(): Promise<Map<string, number>>;
  /**
   * In a store that several nodes share: a text that changes whenever any node writes events or
   * the person mirror, so a node's cached query results go stale with another node's writes too
   * (otherwise `position()`, which only this node's writes move, is the data version).
   */
  dataVersion?(): Promise<string>;
  /**
   * With several nodes on one metadata store: the person mirror copies that store's current rows
   * of the persons a flush changed (ingest.personMirrorState) instead of replaying the flush's
   * changes, which another node's flushes may have overtaken.
   */
  followPersons?(source: (persons: { project_id: number; uuid: string }[]) => Promise<PersonMirrorState>): void;
  /** Replaces the whole person mirror (crash recovery). */
  rebuildPersonMirror(rows: AsyncIterable<{ person: PersonRecord; distinct_ids: string[] }>): Promise<void>;
  /**
   * Runs a compiled read query; rows as plain JS objects (JSON-compatible values). An aborted
   * `signal` stops it (QueryCancelledError).
   */
  query(query: EventQuery, signal?: AbortSignal): Promise<Record<string, unknown>[]>;
  /** Streams a compiled read query in chunks, for exports. */
  stream(query: EventQuery, chunkRows?: number): AsyncIterable<Record<string, unknown>[]>;
  /** Events stored, all projects. */
  countEvents(): Promise<number>;
  /** Every event, a chunk at a time, in no set order (exports; memory stays at one chunk). */
  exportEvents(chunkRows?: number): AsyncIterable<StoredEvent[]>;
  /**
   * Imports: appends events as they are (their person_id included), outside the flush log: the
   * position does not move, and they count as written before any flush (flush_seq 0).
   */
  importEvents(events: StoredEvent[]): Promise<void>;
  /** Bytes of rows one query should sort at most: long reads (exports, long list pages) go a page of about this size per query. */
  readonly pageBytes: number;
  ping(): Promise<boolean>;
  /** Whether each shard answers, by shard number, in a store spread over several servers (for /_ready). */
  pingShards?(): Promise<Record<string, boolean>>;
  sizeBytes(): Promise<number>;
  /** Forces a checkpoint (folds the WAL into the main file). */
  checkpoint(): Promise<void>;
  /**
   * Retention: deletes at most `limit` of the events timestamped before `cutoff` and says which
   * they were (fewer than `limit` means none is left).
   */
  expireEvents(cutoff: Date, limit: number): Promise<UuidsByProject>;
  /**
   * A person's deletion: removes the person and distinct ids of the mirror, then rows of `keep`
   * (the metadata store's current state of those distinct ids, if a later event made a new
   * person) are written back; with `events`, deletes the person's events of flushes up to
   * `afterFlushSeq` (later ones belong to whoever the distinct id maps to by then). Returns
   * the events deleted.
   */
  erasePerson(input: PersonErasure): Promise<number>;
  /**
   * The cohort-membership mirror that queries filter and break down by: replaces one cohort's
   * members (none: the cohort was deleted). The metadata store stays the source of truth.
   */
  replaceCohortMembers(projectId: number, cohortId: number, personUuids: string[]): Promise<void>;
  /**
   * Rewrites the event file so that deleted rows are gone from its bytes too (a delete and a
   * checkpoint leave them in freed blocks). Takes about as long as copying the whole store.
   */
  compact(): Promise<void>;
  /** Shutdown: stops the queries and exports running now (their callers get an error). */
  interruptQueries(): Promise<void>;
  close(): Promise<void>;
}
