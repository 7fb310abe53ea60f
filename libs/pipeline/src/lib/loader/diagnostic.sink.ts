import type {
  PipelineDiagnostic,
  PipelineDiagnosticCode,
} from '../pipeline-diagnostic';

/** A 1-based place in the YAML source. */
export interface Position {
  line: number;
  column: number;
}

export const START: Position = { line: 1, column: 1 };

/** Collects diagnostics so a load reports every problem, not just the first. */
export class DiagnosticSink {
  private readonly items: PipelineDiagnostic[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly file: string) {}

  error(
    code: PipelineDiagnosticCode,
    at: Position,
    message: string,
    hint: string,
    path?: string,
  ): void {
    this.add('error', code, at, message, hint, path);
  }

  warning(
    code: PipelineDiagnosticCode,
    at: Position,
    message: string,
    hint: string,
    path?: string,
  ): void {
    this.add('warning', code, at, message, hint, path);
  }

  hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }

  /** Errors and warnings, each sorted by position (stable for equal positions). */
  result(strict: boolean): {
    errors: PipelineDiagnostic[];
    warnings: PipelineDiagnostic[];
  } {
    const all = this.items.map((d) =>
      strict && d.severity === 'warning'
        ? { ...d, severity: 'error' as const }
        : d,
    );
    const sorted = all
      .map((d, order) => ({ d, order }))
      .sort(
        (a, b) =>
          a.d.line - b.d.line || a.d.column - b.d.column || a.order - b.order,
      )
      .map(({ d }) => d);
    return {
      errors: sorted.filter((d) => d.severity === 'error'),
      warnings: sorted.filter((d) => d.severity === 'warning'),
    };
  }

  private add(
    severity: PipelineDiagnostic['severity'],
    code: PipelineDiagnosticCode,
    at: Position,
    message: string,
    hint: string,
    path: string | undefined,
  ): void {
    // A node reached twice through a YAML alias would otherwise be reported twice.
    const key = `${code}\u0000${at.line}:${at.column}\u0000${message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const diagnostic: PipelineDiagnostic = {
      code,
      severity,
      message,
      hint,
      file: this.file,
      line: at.line,
      column: at.column,
    };
    if (path !== undefined && path !== '') diagnostic.path = path;
    this.items.push(diagnostic);
  }
}
