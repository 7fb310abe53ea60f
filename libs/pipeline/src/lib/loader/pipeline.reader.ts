import { isScalar } from 'yaml';
import { JsonSchemaCheck } from '../checks/json-schema.check';
import { ConditionSyntaxError } from '../condition/condition-syntax.error';
import { parseCondition } from '../condition/condition.parser';
import type { ConditionAst } from '../pipeline.model';
import { EDGE_KEYS, PIPELINE_FORMAT, PIPELINE_KEYS } from '../pipeline-format';
import { START, type Position } from './diagnostic.sink';
import { readStage, type StageDraft } from './stage.reader';
import type { Field, YamlNodeReader, YamlNode } from './yaml-node.reader';

export interface EdgeDraft {
  from?: string;
  to?: string;
  if?: string;
  condition?: ConditionAst;
  at: Position;
  fromAt: Position;
  toAt: Position;
  /** Where the `if` value starts. */
  ifAt?: Position;
}

export interface PipelineDraft {
  name?: string;
  description?: string;
  maxActiveStages: number;
  stages: StageDraft[];
  edges: EdgeDraft[];
}

const NAME = new RegExp(PIPELINE_FORMAT.namePattern);

/** Reads the document root into drafts, reporting every shape problem on the way. */
export function readPipeline(
  reader: YamlNodeReader,
  root: YamlNode | null,
): PipelineDraft {
  const draft: PipelineDraft = {
    maxActiveStages: PIPELINE_FORMAT.maxActiveStages.default,
    stages: [],
    edges: [],
  };
  const rootField: Field = {
    key: '',
    node: root,
    path: '',
    keyAt: START,
    at: reader.at(root, START),
  };
  const fields = reader.fields(rootField, PIPELINE_KEYS, 'the pipeline');
  if (!fields) return draft;

  const versionField = fields.get('version');
  if (versionField) {
    const node = versionField.node;
    if (!isScalar(node) || typeof node.value !== 'number') {
      reader.wrongType(
        versionField,
        'version must be the number 1',
        'version: 1',
      );
    } else if (node.value !== 1) {
      reader.error(
        'unsupported_version',
        versionField,
        `Pipeline format version ${String(node.value)} is not supported by this Stageflow.`,
        'Write version: 1 (or leave it out), or upgrade Stageflow.',
      );
    }
  }

  const nameField = fields.get('name');
  const name = reader.string(nameField, 'name', { nonEmpty: true });
  if (!nameField) {
    reader.error(
      'missing_field',
      rootField,
      'The pipeline has no name.',
      'Add name: <name> at the top, e.g. name: nightly-build.',
      reader.at(root, START),
    );
  } else if (name !== undefined && !NAME.test(name)) {
    reader.error(
      'invalid_value',
      nameField,
      `Pipeline name ${JSON.stringify(name)} is not valid.`,
      `Use lower-case letters, digits, "-" and "_", starting with a letter or digit, at most 64 characters: ${PIPELINE_FORMAT.namePattern}.`,
    );
  } else {
    draft.name = name;
  }
  draft.description = reader.string(fields.get('description'), 'description');
  const limits = PIPELINE_FORMAT.maxActiveStages;
  draft.maxActiveStages =
    reader.integer(
      fields.get('max_active_stages'),
      'max_active_stages',
      limits.min,
      limits.max,
    ) ?? limits.default;

  const stagesField = fields.get('stages');
  if (!stagesField) {
    reader.error(
      'missing_field',
      rootField,
      'The pipeline has no stages.',
      'Add stages: with at least one stage (id and command, or id and message).',
      reader.at(root, START),
    );
  } else {
    const items = reader.items(stagesField, 'stages');
    if (items && items.length === 0) {
      reader.error(
        'no_stages',
        stagesField,
        'The stages list is empty.',
        'Add at least one stage.',
      );
    }
    const schemas = new JsonSchemaCheck();
    draft.stages = (items ?? []).map((item) =>
      readStage(reader, item, schemas),
    );
  }

  const edgesField = fields.get('edges');
  if (
    edgesField &&
    !(isScalar(edgesField.node) && edgesField.node.value === null)
  ) {
    draft.edges = (reader.items(edgesField, 'edges') ?? []).map((item) =>
      readEdge(reader, item),
    );
  }
  return draft;
}

function readEdge(reader: YamlNodeReader, field: Field): EdgeDraft {
  const edge: EdgeDraft = { at: field.at, fromAt: field.at, toAt: field.at };
  const fields = reader.fields(field, EDGE_KEYS, `edge ${field.path}`);
  if (!fields) return edge;
  for (const end of ['from', 'to'] as const) {
    const endField = fields.get(end);
    if (!endField) {
      reader.error(
        'missing_field',
        field,
        `Edge ${field.path} has no "${end}".`,
        `Add ${end}: <stage id>.`,
      );
      continue;
    }
    edge[end] = reader.string(endField, `edge ${end}`, { nonEmpty: true });
    edge[end === 'from' ? 'fromAt' : 'toAt'] = endField.at;
  }
  const ifField = fields.get('if');
  if (!ifField) return edge;
  const text = reader.string(ifField, 'if');
  edge.ifAt = ifField.at;
  if (text === undefined) return edge;
  try {
    edge.condition = parseCondition(text);
    edge.if = text;
  } catch (error) {
    if (!(error instanceof ConditionSyntaxError)) throw error;
    reader.error(
      'invalid_condition',
      ifField,
      `The condition ${JSON.stringify(text)} cannot be read: ${error.reason} (column ${error.column} of the condition).`,
      'Compare paths and literals, e.g. if: "output.logged_in == false", if: "not output.ok", if: "input.mode == \'full\' and output.count > 0". Quote text with \' or ".',
      reader.positionInScalar(ifField, error.column),
    );
  }
  return edge;
}
