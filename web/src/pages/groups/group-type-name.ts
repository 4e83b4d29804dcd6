import type { GroupType } from '../../api/types';

/** A group type's display names; a type without them is shown by its key (no plural is guessed). */
export const singularName = (type: GroupType) => type.name_singular ?? type.group_type;
export const pluralName = (type: GroupType) => type.name_plural ?? type.group_type;
