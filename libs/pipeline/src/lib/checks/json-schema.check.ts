import Ajv from 'ajv';
import addFormats from 'ajv-formats';

export interface SchemaProblem {
  message: string;
  /** JSON pointer segments of the offending value, when known. */
  pointer?: string[];
  /** The unknown keyword, for strict-mode errors. */
  keyword?: string;
}

/**
 * Compiles stage schemas so a broken one fails at load instead of at the first
 * run: ajv, JSON Schema draft-07, in strict mode (an unknown keyword or format
 * is an error; the runner's own ajv is lenient and trusts this check).
 *
 * One ajv per process, built on first use: building it costs milliseconds,
 * which every load of a pipeline without schemas would otherwise pay. After
 * each check every compiled schema is dropped, so nothing accumulates across
 * loads and two stages may use the same `$id`.
 */
export class JsonSchemaCheck {
  private static shared: Ajv | undefined;

  private get ajv(): Ajv {
    if (!JsonSchemaCheck.shared) {
      const ajv = new Ajv({
        strict: true,
        strictTypes: false,
        strictTuples: false,
        logger: false,
      });
      addFormats(ajv);
      JsonSchemaCheck.shared = ajv;
    }
    return JsonSchemaCheck.shared;
  }

  /**
   * `undefined` when `schema` compiles; otherwise ajv's reason, with the
   * JSON pointer segments of the offending value or the unknown keyword
   * when ajv names them.
   */
  problem(schema: unknown): SchemaProblem | undefined {
    if (
      typeof schema !== 'boolean' &&
      (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    ) {
      return { message: 'a schema is a mapping (or true / false)' };
    }
    try {
      if (!this.ajv.validateSchema(schema)) {
        // The first error is the most specific; the rest are its anyOf echoes.
        const first = this.ajv.errors?.[0];
        const pointer = first?.instancePath ?? '';
        const allowed: unknown = first?.params['allowedValues'];
        const detail = Array.isArray(allowed)
          ? ` (${allowed.map(String).join(', ')})`
          : '';
        return {
          message: `${pointer === '' ? 'the schema' : pointer} ${first?.message ?? 'is invalid'}${detail}`,
          pointer: pointer
            .split('/')
            .slice(1)
            .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
        };
      }
      this.ajv.compile(schema);
      return undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const keyword = /unknown keyword: "([^"]+)"/.exec(message)?.[1];
      return { message, ...(keyword !== undefined && { keyword }) };
    } finally {
      this.ajv.removeSchema();
    }
  }
}
