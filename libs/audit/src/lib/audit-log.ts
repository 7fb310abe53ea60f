import { join } from 'node:path';
import { AuditFs, nodeAuditFs } from './audit-fs';
import {
  AUDIT_FIELD_PATTERNS,
  AUDIT_RECORD_TYPES,
  AuditRecord,
  AuditRecordInput,
  auditRecordProblems,
  AuditRecordType,
} from './audit-record';
import { AuditQueryInvalidError, AuditRecordInvalidError } from './audit.errors';

/** The time source of the log, injected so tests control `at`. */
export interface AuditClock {
  now(): Date;
}

/** Filters of `GET /api/audit`. Records come newest first. */
export interface AuditQuery {
  type?: AuditRecordType;
  profile?: string;
  runId?: string;
  /** Records at or after this time (ISO 8601 or a Date). */
  since?: string | Date;
  /** Records before this time (ISO 8601 or a Date). */
  until?: string | Date;
  /** Page size, 1 to {@link AUDIT_QUERY_MAX_LIMIT}. */
  limit: number;
  /** `nextCursor` of the previous page. Opaque to clients. */
  cursor?: string;
}

/** One page of records, newest first. */
export interface AuditPage {
  records: AuditRecord[];
  /** Present when older records may follow; pass it back as `cursor`. */
  nextCursor?: string;
}

/** The largest page {@link AuditLog.query} returns. */
export const AUDIT_QUERY_MAX_LIMIT = 1000;

/** `$STAGEFLOW_HOME/browser/audit.jsonl`. */
export function auditLogPath(home: string): string {
  return join(home, 'browser', 'audit.jsonl');
}

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;
const CHUNK_BYTES = 64 * 1024;
/** A record is a few hundred bytes; a longer "line" is garbage and is skipped, not buffered. */
const MAX_LINE_BYTES = 16 * 1024;
/**
 * Records are appended in time order, but a clock may step back a little. A
 * `since` scan stops at the first record older than `since` by more than this.
 */
const CLOCK_SLACK_MS = 10 * 60 * 1000;
const NEWLINE = 0x0a;

interface Line {
  text: string;
  /** Byte offset of the line's first byte: the cursor of the page that ends before it. */
  start: number;
  /** Longer than MAX_LINE_BYTES; only its tail was kept, so it cannot parse. */
  overlong: boolean;
}

function parseTime(value: string | Date, name: string, problems: string[]): number | undefined {
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  if (Number.isNaN(ms) || (typeof value === 'string' && !/^\d{4}-\d{2}-\d{2}/.test(value))) {
    problems.push(`${name} must be an ISO 8601 time such as 2024-05-01T00:00:00Z`);
    return undefined;
  }
  return ms;
}

/**
 * The Host's audit log of browser profiles: one JSON record per line in
 * `$STAGEFLOW_HOME/browser/audit.jsonl` (folder 0700, file 0600). Records
 * hold names and ids only; {@link AuditLog.append} refuses anything else.
 * Several Host processes may append at once (`O_APPEND`, one write per line).
 */
export class AuditLog {
  /** Where the records are. */
  readonly file: string;
  private readonly dir: string;
  private ready?: Promise<void>;

  /**
   * @param home - the Stageflow home (`ServiceConfig.home`)
   * @param clock - sets each record's `at`
   * @param fs - file access; the real file system by default
   */
  constructor(
    home: string,
    private readonly clock: AuditClock,
    private readonly fs: AuditFs = nodeAuditFs,
  ) {
    this.dir = join(home, 'browser');
    this.file = auditLogPath(home);
  }

  /**
   * Appends one record, stamped with the clock's time.
   *
   * @returns the record as written
   * @throws {@link AuditRecordInvalidError} when a field is not a name or id (path-like, too long, unknown field)
   */
  async append(record: AuditRecordInput): Promise<AuditRecord> {
    const problems = auditRecordProblems(record, false);
    if (problems.length > 0) throw new AuditRecordInvalidError(problems);
    const written = { at: this.clock.now().toISOString(), ...record } as AuditRecord;
    await this.prepare();
    await this.fs.append(this.file, Buffer.from(`${JSON.stringify(written)}\n`, 'utf8'), FILE_MODE);
    return written;
  }

  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await this.fs.ensureDir(this.dir, DIR_MODE);
      await this.fs.ensureFileMode(this.file, FILE_MODE);
    })().catch((e: unknown) => {
      this.ready = undefined; // try again on the next append
      throw e;
    });
    return this.ready;
  }

  /**
   * Reads records newest first, for `GET /api/audit`. A torn last line (a
   * write in progress, or a crash mid-write) and malformed lines are skipped.
   *
   * @throws {@link AuditQueryInvalidError} for a malformed filter, limit or cursor
   */
  async query(q: AuditQuery): Promise<AuditPage> {
    const filter = this.validate(q);
    const size = await this.fs.size(this.file);
    if (size === undefined) return { records: [] };
    const records: AuditRecord[] = [];
    for await (const line of this.linesBackward(Math.min(filter.cursor ?? size, size))) {
      const record = this.parse(line);
      if (!record) continue;
      const at = Date.parse(record.at);
      if (filter.since !== undefined && at < filter.since - CLOCK_SLACK_MS) return { records };
      if (!this.matches(record, at, q, filter)) continue;
      records.push(record);
      if (records.length === q.limit) return { records, nextCursor: line.start > 0 ? String(line.start) : undefined };
    }
    return { records };
  }

  private validate(q: AuditQuery): { since?: number; until?: number; cursor?: number } {
    const problems: string[] = [];
    if (!Number.isInteger(q.limit) || q.limit < 1 || q.limit > AUDIT_QUERY_MAX_LIMIT) {
      problems.push(`limit must be a whole number from 1 to ${AUDIT_QUERY_MAX_LIMIT}`);
    }
    if (q.type !== undefined && !(AUDIT_RECORD_TYPES as readonly string[]).includes(q.type)) {
      problems.push(`type must be one of ${AUDIT_RECORD_TYPES.join(', ')}`);
    }
    if (q.profile !== undefined && !AUDIT_FIELD_PATTERNS.profile.test(q.profile))
      problems.push('profile must be a profile name');
    if (q.runId !== undefined && !AUDIT_FIELD_PATTERNS.runId.test(q.runId)) problems.push('runId must be a run id');
    const since = q.since === undefined ? undefined : parseTime(q.since, 'since', problems);
    const until = q.until === undefined ? undefined : parseTime(q.until, 'until', problems);
    let cursor: number | undefined;
    if (q.cursor !== undefined) {
      if (/^\d{1,15}$/.test(q.cursor)) cursor = Number(q.cursor);
      else problems.push('cursor must be the nextCursor of a previous page');
    }
    if (problems.length > 0) throw new AuditQueryInvalidError(problems);
    return { since, until, cursor };
  }

  private matches(record: AuditRecord, at: number, q: AuditQuery, f: { since?: number; until?: number }): boolean {
    if (q.type !== undefined && record.type !== q.type) return false;
    if (q.profile !== undefined && record.profile !== q.profile) return false;
    if (q.runId !== undefined && !('runId' in record && record.runId === q.runId)) return false;
    if (f.since !== undefined && at < f.since) return false;
    if (f.until !== undefined && at >= f.until) return false;
    return true;
  }

  private parse(line: Line): AuditRecord | undefined {
    if (line.overlong || line.text === '') return undefined;
    try {
      const value: unknown = JSON.parse(line.text);
      return auditRecordProblems(value, true).length === 0 ? (value as AuditRecord) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Complete lines ending before `end`, last first, reading the file backwards
   * in chunks. Bytes after the last newline are skipped: at the file's end they
   * are a line still being written (or torn by a crash); before a cursor there
   * are none, since a cursor is a line start.
   */
  private async *linesBackward(end: number): AsyncGenerator<Line> {
    let pos = end;
    let pending = Buffer.alloc(0); // bytes [pos, pos + pending.length)
    let dropTail = true;
    let overlong = false;
    while (pos > 0 || pending.length > 0) {
      if (pos > 0) {
        const start = Math.max(0, pos - CHUNK_BYTES);
        pending = Buffer.concat([await this.fs.read(this.file, start, pos - start), pending]);
        pos = start;
      }
      if (dropTail) {
        const lastNewline = pending.lastIndexOf(NEWLINE);
        if (lastNewline === -1) {
          if (pos === 0) return;
          pending = Buffer.alloc(0);
          continue;
        }
        pending = pending.subarray(0, lastNewline + 1);
        dropTail = false;
      }
      // `pending` now ends with a newline (or is empty): emit whole lines from its end.
      while (pending.length > 0) {
        const prev = pending.length >= 2 ? pending.lastIndexOf(NEWLINE, pending.length - 2) : -1;
        if (prev === -1 && pos > 0) break; // the line starts in an earlier chunk
        const lineStart = prev + 1;
        yield {
          text: pending.subarray(lineStart, pending.length - 1).toString('utf8'),
          start: pos + lineStart,
          overlong,
        };
        overlong = false;
        pending = pending.subarray(0, lineStart);
      }
      if (pending.length > MAX_LINE_BYTES) {
        // Keep the newline that ends it; what is left of the line will not parse.
        pending = pending.subarray(pending.length - 1);
        overlong = true;
      }
    }
  }
}
