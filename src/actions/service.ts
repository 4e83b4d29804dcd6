/**
 * The rules of actions: a name unique among the project's live actions, steps checked and
 * compiled before they are saved, deletion soft (a deleted action is unknown to queries but can
 * be restored). Queries reach actions through `resolve`.
 */
import { notFound, validationError } from '../kernel/errors.js';
import type { ActionStore, ActionWrite, Page, PageOf, StoredAction } from '../store/types.js';
import { numericId } from '../util/numeric-id.js';
import { parseSteps } from './steps.js';

export interface ActionInput {
  name?: string;
  description?: string;
  tags?: string[];
  steps?: unknown;
  deleted?: boolean;
}

export const MAX_NAME_LENGTH = 400;

export class Actions {
  constructor(private readonly store: ActionStore) {}

  page(query: Page & { projectId: number; searchWords: string[] }): Promise<PageOf<StoredAction>> {
    return this.store.pageActions(query);
  }

  /** An action of the project (deleted ones too), or 404. */
  async get(projectId: number, id: string): Promise<StoredAction> {
    const numeric = numericId(id);
    const action = numeric === null ? null : await this.store.getAction(projectId, numeric);
    if (!action) throw notFound();
    return action;
  }

  /** A live action for a query, or null (the caller says which field named it). */
  async resolve(projectId: number, id: number): Promise<StoredAction | null> {
    const action = Number.isSafeInteger(id) ? await this.store.getAction(projectId, id) : null;
    return action && !action.deleted ? action : null;
  }

  async create(projectId: number, userId: number, input: ActionInput): Promise<StoredAction> {
    const name = this.checkName(input.name);
    if (name === null) throw validationError('name is required.', 'name', 'required');
    await this.checkUnique(projectId, name, null);
    const write: ActionWrite = {
      name,
      description: input.description ?? '',
      tags: input.tags ?? [],
      steps: input.steps === undefined ? [] : parseSteps(input.steps),
      deleted: false,
    };
    return this.store.createAction(projectId, userId, write);
  }

  async update(projectId: number, id: string, input: ActionInput): Promise<StoredAction> {
    const current = await this.get(projectId, id);
    const name = this.checkName(input.name);
    // Restoring an action, or renaming it, must not make two live actions share a name.
    const deleted = input.deleted ?? current.deleted;
    if (!deleted && (name !== null || current.deleted)) await this.checkUnique(projectId, name ?? current.name, current.id);
    const patch: Partial<ActionWrite> = {
      name: name ?? undefined,
      description: input.description,
      tags: input.tags,
      steps: input.steps === undefined ? undefined : parseSteps(input.steps),
      deleted: input.deleted,
    };
    const updated = await this.store.updateAction(projectId, current.id, patch);
    if (!updated) throw notFound();
    return updated;
  }

  private checkName(value: string | undefined): string | null {
    if (value === undefined) return null;
    const name = value.trim();
    if (name === '') throw validationError('name must not be blank.', 'name', 'blank');
    return name;
  }

  private async checkUnique(projectId: number, name: string, exceptId: number | null): Promise<void> {
    if (await this.store.liveActionNamed(projectId, name, exceptId)) {
      throw validationError('This project already has an action with this name.', 'name', 'unique');
    }
  }
}
