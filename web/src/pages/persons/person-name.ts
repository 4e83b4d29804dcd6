import type { Person } from '../../api/types';

/** What to call a person: their email or name property, else the API's name, else the first distinct id. */
export function personLabel(person: Pick<Person, 'name' | 'properties' | 'distinct_ids' | 'uuid'>): string {
  for (const key of ['email', 'name']) {
    const value = person.properties[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return person.name || person.distinct_ids[0] || person.uuid;
}
