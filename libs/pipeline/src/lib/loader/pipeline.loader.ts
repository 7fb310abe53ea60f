import { LineCounter, parseDocument, type YAMLError } from 'yaml';
import { checkGraph } from '../checks/graph.check';
import {
  checkInputSchemas,
  checkJoinSkipsWork,
} from '../checks/join-topology.check';
import {
  checkConditionFields,
  checkProfileHeaded,
} from '../checks/stage-consistency.check';
import type { Pipeline, StageDefinition } from '../pipeline.model';
import type {
  LoadPipelineOptions,
  PipelineLoadResult,
} from '../pipeline-diagnostic';
import { PIPELINE_FORMAT } from '../pipeline-format';
import { PipelineInvalidError } from '../pipeline-invalid.error';
import { DiagnosticSink, START } from './diagnostic.sink';
import { readPipeline } from './pipeline.reader';
import { YamlNodeReader } from './yaml-node.reader';

const DEFAULT_FILE = '<inline>';

/**
 * Loads a pipeline (format v1) from YAML text. Reports every problem it finds
 * with a stable code, position and hint; never throws on bad input.
 *
 * @param source - The YAML text (at most 1 MiB).
 * @param options - `file` names the source in diagnostics; `strict` turns warnings into errors.
 */
export function loadPipeline(
  source: string,
  options: LoadPipelineOptions = {},
): PipelineLoadResult {
  const file =
    typeof options.file === 'string' && options.file !== ''
      ? options.file
      : DEFAULT_FILE;
  const strict = options.strict === true;
  const sink = new DiagnosticSink(file);
  let pipeline: Pipeline | undefined;
  try {
    pipeline = load(source, sink);
  } catch (error) {
    // Safety net so a loader bug reaches the user as a diagnostic, not a crash of the caller.
    sink.error(
      'internal_error',
      START,
      `The pipeline loader failed unexpectedly: ${error instanceof Error ? error.message : String(error)}.`,
      'This is a bug in Stageflow; please report it with the YAML that caused it.',
    );
  }
  const { errors, warnings } = sink.result(strict);
  if (errors.length > 0 || !pipeline) return { ok: false, errors, warnings };
  return { ok: true, pipeline, warnings };
}

/**
 * Like {@link loadPipeline}, but returns the pipeline or throws.
 *
 * @throws PipelineInvalidError (code `pipeline_invalid`, status 422) with `details = { errors, warnings }`.
 */
export function loadPipelineOrThrow(
  source: string,
  options: LoadPipelineOptions = {},
): Pipeline {
  const result = loadPipeline(source, options);
  if (!result.ok)
    throw new PipelineInvalidError(result.errors, result.warnings);
  return result.pipeline;
}

function load(source: string, sink: DiagnosticSink): Pipeline | undefined {
  if (typeof source !== 'string') {
    sink.error(
      'wrong_type',
      START,
      `The pipeline source must be text; got ${source === null ? 'null' : typeof source}.`,
      'Pass the YAML file contents as a string.',
    );
    return undefined;
  }
  const bytes = Buffer.byteLength(source, 'utf8');
  if (bytes > PIPELINE_FORMAT.maxSourceBytes) {
    sink.error(
      'input_too_large',
      START,
      `The pipeline is ${bytes} bytes; the limit is ${PIPELINE_FORMAT.maxSourceBytes} bytes (1 MiB).`,
      'Keep pipelines small: move data and scripts into files the stages read.',
    );
    return undefined;
  }

  const lines = new LineCounter();
  const doc = parseDocument(source, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
    keepSourceTokens: true,
    // Problems are returned as diagnostics; nothing may go to the process's warning channel.
    logLevel: 'error',
  });
  const reader = new YamlNodeReader(doc, lines, source, sink);
  // After the first syntax error on a line the parser's view of that line is
  // unreliable, so later errors there are cascades: report one per line.
  const reportedLines = new Set<number>();
  for (const error of doc.errors) {
    const line = reader.position(error.pos[0]).line;
    if (error.code !== 'DUPLICATE_KEY' && reportedLines.has(line)) continue;
    reportedLines.add(line);
    reportYamlError(reader, sink, error, source);
  }
  for (const warning of doc.warnings) {
    sink.warning(
      'yaml_warning',
      reader.position(warning.pos[0]),
      `YAML: ${warning.message}.`,
      'Remove the tag or directive; pipelines use plain YAML values.',
    );
  }
  if (doc.errors.length > 0) return undefined;

  try {
    // Expands every alias once with yaml's own limit, before any reader walks them.
    doc.toJS({ maxAliasCount: PIPELINE_FORMAT.maxAliasCount });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const unresolved = /^Unresolved alias.*: (.+)$/.exec(message)?.[1];
    if (unresolved !== undefined) {
      const offset = source.indexOf(`*${unresolved}`);
      sink.error(
        'yaml_syntax',
        offset >= 0 ? reader.position(offset) : START,
        `The alias *${unresolved} has no anchor &${unresolved} before it.`,
        `Define the anchor first (key: &${unresolved} value), then reuse it with *${unresolved}; or write the value out.`,
      );
    } else {
      sink.error(
        'yaml_alias_limit',
        START,
        `The YAML aliases expand too much to load safely (${message}).`,
        `Use fewer aliases (*name): at most ${PIPELINE_FORMAT.maxAliasCount} expansions in a pipeline.`,
      );
    }
    return undefined;
  }
  if (doc.contents === null) {
    sink.error(
      'empty_document',
      START,
      'The pipeline file is empty.',
      'Start with name: <name> and a stages: list.',
    );
    return undefined;
  }

  const draft = readPipeline(reader, reader.resolve(doc.contents));
  checkProfileHeaded(draft.stages, sink);
  const graph = checkGraph(draft, sink);
  if (graph) {
    checkJoinSkipsWork(graph, sink);
    checkInputSchemas(graph, sink);
    checkConditionFields(graph, sink);
  }
  if (sink.hasErrors()) return undefined;

  const stages = draft.stages
    .map((s) => s.definition)
    .filter((s): s is StageDefinition => s !== undefined);
  if (
    draft.name === undefined ||
    stages.length !== draft.stages.length ||
    stages.length === 0
  ) {
    // Every path that leaves a part unread reports why; reaching here is a loader bug.
    throw new Error(
      'a part of the pipeline was not read, yet no error was reported',
    );
  }
  return {
    version: 1,
    name: draft.name,
    ...(draft.description !== undefined && { description: draft.description }),
    maxActiveStages: draft.maxActiveStages,
    stages,
    edges: draft.edges.map((e) => ({
      from: e.from as string,
      to: e.to as string,
      ...(e.if !== undefined && { if: e.if }),
      ...(e.condition !== undefined && { condition: e.condition }),
    })),
  };
}

const YAML_HINTS: Readonly<Record<string, string>> = {
  BAD_INDENT:
    'Check the indentation: items of one mapping or list line up, nested ones are indented further (spaces only).',
  TAB_AS_INDENT:
    'Indent with spaces; YAML does not allow tabs for indentation.',
  MISSING_CHAR: 'Close the quote or bracket, or put a space after ":".',
  MULTIPLE_DOCS:
    'Put one pipeline per file: remove the "---" separator and what follows, or split the file.',
  BLOCK_AS_IMPLICIT_KEY:
    'Check the indentation and that each key ends with ": ".',
  MULTILINE_IMPLICIT_KEY: 'Keep each key on one line and end it with ": ".',
  UNEXPECTED_TOKEN:
    'Remove the stray character, or quote the value if it is text.',
  RESOURCE_EXHAUSTION: 'The YAML nests too deeply; flatten it.',
};

function reportYamlError(
  reader: YamlNodeReader,
  sink: DiagnosticSink,
  error: YAMLError,
  source: string,
): void {
  const at = reader.position(openingQuote(error, source) ?? error.pos[0]);
  if (error.code === 'DUPLICATE_KEY') {
    const key = (/^[^:\n]{1,64}/.exec(source.slice(error.pos[0])) ?? [
      '',
    ])[0].trim();
    sink.error(
      'duplicate_key',
      at,
      `The key ${JSON.stringify(key)} appears twice in the same mapping.`,
      'Keep one of them; a YAML mapping cannot repeat a key.',
    );
    return;
  }
  sink.error(
    'yaml_syntax',
    at,
    `The file is not valid YAML: ${error.message}.`,
    (Object.hasOwn(YAML_HINTS, error.code)
      ? YAML_HINTS[error.code]
      : undefined) ??
      'Fix the YAML syntax at this place (check quotes, colons and indentation).',
  );
}

/**
 * yaml reports an unclosed quote where the file ends; the opening quote is
 * where the fix goes. Finds the last unescaped quote of that kind before it.
 */
function openingQuote(error: YAMLError, source: string): number | undefined {
  const match = /^Missing closing (["'])quote/.exec(error.message);
  if (error.code !== 'MISSING_CHAR' || !match) return undefined;
  const quote = match[1];
  for (let i = Math.min(error.pos[0], source.length) - 1; i >= 0; i--) {
    if (source[i] === quote && !(quote === '"' && source[i - 1] === '\\'))
      return i;
  }
  return undefined;
}
