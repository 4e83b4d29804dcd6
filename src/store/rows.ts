/**
 * Row → record mappers shared by the metadata stores (SQLite and PostgreSQL give these columns
 * the same names; booleans come as 0/1 from one and as true/false from the other).
 */
import type { Membership, MembershipLevel, Project, User } from './types.js';

type Row = Record<string, unknown>;

export const toBool = (value: unknown): boolean => value === 1 || value === true;

/** A JSON column: text (SQLite) or already parsed (PostgreSQL's `json`). */
export function jsonColumn<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined) return fallback;
  if (typeof value !== 'string') return value as T;
  try {
    return JSON.parse(value) as T;
  } catch {
    return fallback;
  }
}

/** A nullable integer column (PostgreSQL gives a bigint as a string). */
export const nullableNumber = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export const userFromRow = (row: Row): User => ({
  id: row.id as number,
  uuid: row.uuid as string,
  distinct_id: row.distinct_id as string,
  first_name: row.first_name as string,
  last_name: row.last_name as string,
  email: row.email as string,
  is_email_verified: toBool(row.is_email_verified),
  created_at: row.created_at as string,
});

export const projectFromRow = (row: Row): Project => ({
  id: row.id as number,
  uuid: row.uuid as string,
  organization_id: row.organization_id as string,
  name: row.name as string,
  api_token: row.api_token as string,
  timezone: row.timezone as string,
  anonymize_ips: toBool(row.anonymize_ips),
  week_start_day: row.week_start_day === 1 ? 1 : row.week_start_day === 0 ? 0 : null,
  test_account_filters: jsonList(row.test_account_filters),
  created_at: row.created_at as string,
});

/** A JSON list column: text from SQLite, already parsed from PostgreSQL's `json`. */
function jsonList(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value !== 'string') return [];
  try {
    const parsed: unknown = JSON.parse(value);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/** An invite as the API shows it (never its link's token hash). */
export const INVITE_COLUMNS = 'id, organization_id, target_email, level, created_by, created_at';

export const membershipFromRow = (row: Row): Membership => ({
  id: row.id as string,
  organization_id: row.organization_id as string,
  user_id: row.user_id as number,
  level: row.level as MembershipLevel,
  joined_at: row.joined_at as string,
  updated_at: row.updated_at as string,
});
