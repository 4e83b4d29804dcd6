/**
 * What the members page offers, by the API's own rules (src/tenancy/members/rules.ts): the API
 * decides, these only hide what it would refuse.
 */
import { ADMIN, OWNER, type Level } from '../../api/types';

export const canGrant = (actor: Level, level: Level) => actor >= ADMIN && !(level === OWNER && actor !== OWNER) && level <= actor;

export const canChangeLevel = (actor: Level, target: Level, isSelf: boolean) => !isSelf && actor >= ADMIN && target <= actor;

export const canRemove = (actor: Level, target: Level, isSelf: boolean) => target !== OWNER && (isSelf || (actor >= ADMIN && target <= actor));
