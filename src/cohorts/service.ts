/**
 * The rules of the cohorts API: what a cohort may say (docs/cohorts.md), which cohorts it may name
 * (existing ones of the same project, never itself, directly or not), static cohorts' members
 * (CSV uploads and person ids: every row resolves or nothing is applied), and what a change
 * sets off (a recalculation of the cohort and of the cohorts naming it; flags reload the
 * project's cohort definitions).
 */
import { CohortDefinitionError, referencedCohorts, validateCohortFilters } from '../flags/engine/cohorts.js';
import type { JsonObject } from '../kernel/json.js';
import { notFound, validationError } from '../kernel/errors.js';
import type { CohortStore, CohortWrite, PersonStore, StoredCohort } from '../store/types.js';
import { canonicalUuid } from '../util/uuid.js';
import type { CohortCalculations } from './calculation.js';
import { CsvError, parseCohortCsv, type CsvRow } from './csv.js';

const MAX_NAME = 400;
/** How many bad rows an error lists (the count says how many there were). */
const LISTED_BAD_ROWS = 20;
/** person_ids per add_persons request. */
export const MAX_PERSON_IDS = 10_000;

export interface CohortsDeps {
  store: CohortStore;
  persons: Pick<PersonStore, 'resolve'>;
  calculations: CohortCalculations;
  /** A cohort's definition changed or it was deleted: flags must read the project's cohorts again. */
  definitionsChanged(projectId: number): void;
}

export interface CohortInput {
  name?: unknown;
  description?: unknown;
  filters?: unknown;
  is_static?: unknown;
  deleted?: unknown;
  /** A static cohort's CSV (distinct ids, emails or person ids). */
  csv?: unknown;
}

interface BadRow {
  row: number;
  value: string;
  reason: string;
}

export class Cohorts {
  constructor(private readonly deps: CohortsDeps) {}

  async list(projectId: number): Promise<StoredCohort[]> {
    return this.deps.store.list(projectId);
  }

  /** A non-deleted cohort of the project, or 404. */
  async get(projectId: number, id: number): Promise<StoredCohort> {
    const cohort = await this.deps.store.get(projectId, id);
    if (!cohort || cohort.deleted) throw notFound('Cohort not found.');
    return cohort;
  }

  async create(projectId: number, userId: number | null, input: CohortInput): Promise<StoredCohort> {
    const isStatic = optionalBoolean(input.is_static, 'is_static') ?? false;
    const write: CohortWrite = {
      name: text(input.name, 'name', MAX_NAME) ?? '',
      description: text(input.description, 'description', 10_000) ?? '',
      filters: {},
      is_static: isStatic,
      deleted: false,
    };
    if (isStatic) {
      if (input.filters !== undefined && !isEmptyFilters(input.filters)) throw validationError('A static cohort has no filters: its members are uploaded (csv) or added by person id.', 'filters');
      const members = input.csv === undefined ? [] : await this.csvMembers(projectId, input.csv);
      const created = await this.deps.store.create(projectId, userId, write, members);
      return this.changed(projectId, created.id);
    }
    if (input.csv !== undefined) throw validationError('Only static cohorts take a CSV upload (set is_static).', 'csv');
    write.filters = await this.checkedFilters(projectId, null, input.filters);
    const created = await this.deps.store.create(projectId, userId, write);
    return this.changed(projectId, created.id);
  }

  async update(projectId: number, id: number, input: CohortInput): Promise<StoredCohort> {
    const cohort = await this.get(projectId, id);
    const patch: Partial<CohortWrite> = {};
    const name = text(input.name, 'name', MAX_NAME);
    if (name !== null) patch.name = name;
    const description = text(input.description, 'description', 10_000);
    if (description !== null) patch.description = description;
    const isStatic = optionalBoolean(input.is_static, 'is_static');
    if (isStatic !== null && isStatic !== cohort.is_static) throw validationError('A cohort cannot change between static and dynamic; create a new one.', 'is_static');
    const deleted = optionalBoolean(input.deleted, 'deleted');
    if (deleted !== null) patch.deleted = deleted;
    if (input.filters !== undefined && !(cohort.is_static && isEmptyFilters(input.filters))) {
      if (cohort.is_static) throw validationError('A static cohort has no filters.', 'filters');
      patch.filters = await this.checkedFilters(projectId, id, input.filters);
    }
    let members: string[] = [];
    if (input.csv !== undefined) {
      if (!cohort.is_static) throw validationError('Only static cohorts take a CSV upload.', 'csv');
      members = await this.csvMembers(projectId, input.csv);
    }
    await this.deps.store.update(projectId, id, patch);
    if (members.length > 0) await this.deps.store.addMembers(projectId, id, members);
    if (patch.filters !== undefined || patch.deleted !== undefined || members.length > 0) return this.changed(projectId, id);
    return this.deps.store.get(projectId, id) as Promise<StoredCohort>;
  }

  async delete(projectId: number, id: number): Promise<void> {
    await this.get(projectId, id);
    await this.deps.store.update(projectId, id, { deleted: true });
    await this.changed(projectId, id);
  }

  /** Adds persons (integer ids or uuids) to a static cohort: all exist, or nothing is added. */
  async addPersons(projectId: number, id: number, raw: unknown): Promise<StoredCohort> {
    const cohort = await this.get(projectId, id);
    if (!cohort.is_static) throw validationError('Persons can be added only to static cohorts.', 'person_ids');
    if (!Array.isArray(raw) || raw.length === 0) throw validationError('person_ids must be a non-empty list of person ids or uuids.', 'person_ids');
    if (raw.length > MAX_PERSON_IDS) throw validationError(`At most ${MAX_PERSON_IDS} person ids at a time.`, 'person_ids');
    const rows = raw.map((value, i) => ({ row: i + 1, value: typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '' }));
    const { uuids, bad } = await this.resolvePersonIds(projectId, rows);
    if (bad.length > 0) throw badRows('person_ids', 'person id', bad);
    await this.deps.store.addMembers(projectId, id, uuids);
    return this.changed(projectId, id);
  }

  async removePerson(projectId: number, id: number, raw: unknown): Promise<StoredCohort> {
    const cohort = await this.get(projectId, id);
    if (!cohort.is_static) throw validationError('Persons can be removed only from static cohorts.', 'person_id');
    const value = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw : '';
    const { uuids, bad } = await this.resolvePersonIds(projectId, [{ row: 1, value }]);
    if (bad.length > 0) throw validationError(`Unknown person: ${JSON.stringify(value)}.`, 'person_id');
    if (!(await this.deps.store.removeMember(projectId, id, uuids[0]))) throw validationError('The person is not in this cohort.', 'person_id');
    return this.changed(projectId, id);
  }

  /**
   * After a change: the cohort and the cohorts naming it are recalculated (a static or deleted
   * one only has its membership mirrored to the event store again); flags reload.
   */
  private async changed(projectId: number, id: number): Promise<StoredCohort> {
    this.deps.definitionsChanged(projectId);
    const cohort = (await this.deps.store.get(projectId, id))!;
    // Marked before answering, so the caller sees `is_calculating` and can poll it.
    if (!cohort.deleted && !cohort.is_static) await this.deps.store.startCalculation(projectId, id);
    this.deps.calculations.recalculateWithDependents(projectId, id).catch(() => undefined);
    return (await this.deps.store.get(projectId, id))!;
  }

  private async checkedFilters(projectId: number, selfId: number | null, raw: unknown): Promise<JsonObject> {
    if (raw === undefined) throw validationError('A dynamic cohort needs filters: {"properties": {"type": "OR", "values": [...]}}.', 'filters', 'required');
    try {
      validateCohortFilters(raw);
    } catch (error) {
      if (error instanceof CohortDefinitionError) throw validationError(`Invalid filters${error.path ? ` at ${error.path}` : ''}: ${error.message}.`, 'filters');
      throw error;
    }
    const filters = raw as JsonObject;
    const all = await this.deps.store.list(projectId);
    const byId = new Map(all.map((c) => [c.id, c]));
    for (const ref of referencedCohorts(filters)) {
      if (ref === selfId) throw validationError('A cohort cannot contain itself.', 'filters');
      if (!byId.has(ref)) throw validationError(`Cohort ${ref} does not exist in this project.`, 'filters');
    }
    if (selfId !== null && reaches(byId, referencedCohorts(filters), selfId)) {
      throw validationError('A cohort cannot contain itself (through the cohorts it names).', 'filters');
    }
    return filters;
  }

  /** The persons a CSV names; any row that names nobody fails the whole upload. */
  private async csvMembers(projectId: number, raw: unknown): Promise<string[]> {
    if (typeof raw !== 'string') throw validationError('csv must be the text of a CSV file.', 'csv');
    let parsed;
    try {
      parsed = parseCohortCsv(raw);
    } catch (error) {
      if (error instanceof CsvError) throw validationError(`The CSV could not be read: ${error.message}.`, 'csv');
      throw error;
    }
    const bad: BadRow[] = parsed.empty.map((row) => ({ row, value: '', reason: `no ${parsed.key}` }));
    let uuids: string[] = [];
    if (parsed.key === 'person_id') {
      const resolved = await this.resolvePersonIds(projectId, parsed.rows);
      bad.push(...resolved.bad);
      uuids = resolved.uuids;
    } else {
      const lookup = parsed.key === 'email' ? this.deps.store.personsByEmail.bind(this.deps.store) : this.deps.store.personsByDistinctId.bind(this.deps.store);
      const found = await lookup(projectId, parsed.rows.map((r) => r.value));
      for (const row of parsed.rows) {
        const uuid = found.get(parsed.key === 'email' ? row.value.toLowerCase() : row.value);
        if (uuid) uuids.push(uuid);
        else bad.push({ ...row, reason: `no person has this ${parsed.key}` });
      }
    }
    if (bad.length > 0) throw badRows('csv', parsed.key, bad.sort((a, b) => a.row - b.row));
    return [...new Set(uuids)];
  }

  private async resolvePersonIds(projectId: number, rows: CsvRow[]): Promise<{ uuids: string[]; bad: BadRow[] }> {
    const uuids: string[] = [];
    const bad: BadRow[] = [];
    for (const row of rows) {
      const ref = /^\d{1,15}$/.test(row.value) ? Number(row.value) : canonicalUuid(row.value);
      const [uuid] = ref === null ? [] : await this.deps.persons.resolve(projectId, [ref]);
      if (uuid) uuids.push(uuid);
      else bad.push({ ...row, reason: ref === null ? 'not a person id or uuid' : 'no such person' });
    }
    return { uuids, bad };
  }
}

function badRows(attr: string, what: string, bad: BadRow[]) {
  const listed = bad
    .slice(0, LISTED_BAD_ROWS)
    .map((b) => `row ${b.row}${b.value ? ` (${JSON.stringify(b.value.slice(0, 100))})` : ''}: ${b.reason}`)
    .join('; ');
  const more = bad.length > LISTED_BAD_ROWS ? `; and ${bad.length - LISTED_BAD_ROWS} more` : '';
  return validationError(`${bad.length} row(s) name no person (by ${what}); nothing was added. ${listed}${more}.`, attr);
}

/** Whether following cohort references from `start` reaches `target`. */
function reaches(byId: Map<number, StoredCohort>, start: number[], target: number): boolean {
  const seen = new Set<number>();
  const stack = [...start];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === target) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    const cohort = byId.get(id);
    if (cohort) stack.push(...referencedCohorts(cohort.filters));
  }
  return false;
}

function isEmptyFilters(raw: unknown): boolean {
  return raw === null || (typeof raw === 'object' && !Array.isArray(raw) && Object.keys(raw as object).length === 0);
}

function text(raw: unknown, attr: string, max: number): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') throw validationError(`${attr} must be a string.`, attr);
  if (raw.length > max) throw validationError(`${attr} may be at most ${max} characters.`, attr, 'max_length');
  return raw;
}

function optionalBoolean(raw: unknown, attr: string): boolean | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'boolean') throw validationError(`${attr} must be true or false.`, attr);
  return raw;
}
