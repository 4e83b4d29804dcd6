/** Best-effort HogQL types the printer tracks to choose casts and report column types. */
export type HogQLType = 'String' | 'Integer' | 'Float' | 'Boolean' | 'DateTime' | 'Date' | 'UUID' | 'Null';

export const isNumeric = (type: HogQLType) => type === 'Integer' || type === 'Float';
