import type { GroupType } from '../../api/types';

/** A group type's display names, falling back to its key ("company" → "company" / "companies" is not guessed). */
export const singularName = (type: GroupType) => type.name_singular ?? type.group_type;
export const pluralName = (type: GroupType) => type.name_plural ?? type.group_type;
