import { apiPath } from '../api/api-client';
import type { PipelineSummary, RunView } from '../api/api.types';
import { h, replaceChildren } from '../dom/h';
import { runHref } from '../router/routes';
import { errorBox, errorText } from '../shell/errors.view';
import type { AppContext } from '../shell/page';

/** The run input as typed: JSON, or a message that says where it is not. */
export function parseRunInput(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `The input is not JSON: ${(error as Error).message}` };
  }
}

/** Start a run of a registered pipeline with a JSON input, then open it. */
export function startRunForm(ctx: AppContext): HTMLElement {
  const select = h('select', { name: 'pipeline', required: true, 'aria-label': 'Pipeline' });
  const input = h('textarea', { name: 'input', rows: 4, spellcheck: 'false', 'aria-label': 'Run input (JSON)' });
  input.value = '{}';
  const submit = h('button', { type: 'submit', class: 'primary', disabled: true }, 'Start run');
  const errors = errorBox();
  const note = h('p', { class: 'muted' }, 'Loading pipelines…');
  const form = h(
    'form',
    {
      class: 'card start-run',
      'data-testid': 'start-run',
      on: {
        submit: (event) => {
          event.preventDefault();
          void start();
        },
      },
    },
    h('h2', null, 'Start a run'),
    note,
    h('div', { class: 'row' }, h('label', null, 'Pipeline ', select), h('label', { class: 'grow' }, 'Input (JSON) ', input)),
    h('div', { class: 'buttons' }, submit),
    errors.element,
  );

  const start = async () => {
    errors.clear();
    const parsed = parseRunInput(input.value);
    if (!parsed.ok) return errors.show(new Error(parsed.message));
    submit.disabled = true;
    try {
      const run = await ctx.api.post<RunView>(apiPath('runs'), { pipeline: select.value, input: parsed.value });
      ctx.router.go(runHref(run.id));
    } catch (error) {
      errors.show(error);
    } finally {
      submit.disabled = false;
    }
  };

  ctx.api
    .get<PipelineSummary[]>(apiPath('pipelines'))
    .then((pipelines) => {
      replaceChildren(select, pipelines.map((p) => h('option', { value: p.name }, `${p.name} (${p.stages} stage${p.stages === 1 ? '' : 's'})`)));
      submit.disabled = pipelines.length === 0;
      replaceChildren(
        note,
        pipelines.length === 0
          ? 'No pipeline is registered yet. Register one with POST /api/pipelines (see docs/api.md), then reload this page.'
          : 'Runs a registered pipeline; root stages receive the input.',
      );
    })
    .catch((error: unknown) => replaceChildren(note, `The pipelines could not be read: ${errorText(error)}`));
  return form;
}
