import { AUDIT_RECORD_TYPES } from '../api/api.types';

/** The filters of `GET /api/audit` (docs/profiles.md, "Audit log"), as kept in the page's address. */
export interface AuditFilters {
  type?: string;
  profile?: string;
  run?: string;
  /** ISO 8601, inclusive. */
  since?: string;
  /** ISO 8601, exclusive. */
  until?: string;
  limit?: number;
}

const FIELDS = ['type', 'profile', 'run', 'since', 'until'] as const;

/** Filters from the address bar's query; unknown keys and a non-numeric limit are dropped. */
export function filtersFromQuery(query: Record<string, string>): AuditFilters {
  const filters: AuditFilters = {};
  for (const field of FIELDS) if (query[field]) filters[field] = query[field];
  if (filters.type !== undefined && !(AUDIT_RECORD_TYPES as readonly string[]).includes(filters.type)) delete filters.type;
  const limit = Number(query['limit']);
  if (Number.isInteger(limit) && limit >= 1 && limit <= 1000) filters.limit = limit;
  return filters;
}

/** The query for the address bar (and, with a cursor, for the api). */
export function filtersToQuery(filters: AuditFilters): Record<string, string> {
  const query: Record<string, string> = {};
  for (const field of FIELDS) if (filters[field]) query[field] = filters[field] as string;
  if (filters.limit !== undefined) query['limit'] = String(filters.limit);
  return query;
}

/** A `datetime-local` value (the operator's local time) as ISO 8601 UTC; undefined when empty or invalid. */
export function localInputToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().replace('.000Z', 'Z');
}

/** ISO 8601 as a `datetime-local` value in the operator's time zone. */
export function isoToLocalInput(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
