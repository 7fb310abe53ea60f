import { apiPath, type ApiClient } from '../api/api-client';
import { h, setText } from '../dom/h';
import { createLiveView, type LiveViewHandle } from '../live-view';
import { errorBox } from '../shell/errors.view';
import { isLoginGate, type StageModel } from './run.model';

export const LOGIN_LINE = 'Log in in the browser view below, then confirm.';

/**
 * A gate waiting for the operator: its message, an optional note, Accept and
 * Reject. A human login gate (`verify: browser_login`) also carries the live
 * view of the Host's browser (interactive), the page address, the dialog
 * overlay and "Page seems stuck?".
 */
export class GatePanelView {
  readonly element: HTMLElement;
  private readonly liveView?: LiveViewHandle;
  private readonly buttons: HTMLButtonElement[];
  private readonly status = h('p', { class: 'muted', role: 'status' });

  constructor(
    private readonly stage: StageModel,
    private readonly api: ApiClient,
  ) {
    const note = h('textarea', { name: 'note', rows: 2, maxlength: 2000, 'aria-label': 'Note (optional)' });
    const errors = errorBox();
    const answer = async (decision: 'accept' | 'reject') => {
      errors.clear();
      this.setBusy(true);
      setText(this.status, decision === 'accept' ? 'Accepting…' : 'Rejecting…');
      try {
        const body = note.value.trim() ? { decision, note: note.value.trim() } : { decision };
        await this.api.post(apiPath('runs', stage.runId, 'stages', stage.id, 'gate'), body);
        setText(this.status, decision === 'accept' ? 'Accepted.' : 'Rejected.');
        // The relay ends the interactive view too (gate-answered); closing it here stops input at once.
        this.liveView?.end(
          decision === 'accept' ? 'The gate was accepted, so this live view is closed. The Host now checks the login.' : 'The gate was rejected, so this live view is closed.',
        );
      } catch (error) {
        setText(this.status, '');
        errors.show(error);
        this.setBusy(false);
      }
    };
    this.buttons = [
      h('button', { type: 'button', class: 'primary', 'data-action': 'accept', 'data-testid': 'gate-accept', on: { click: () => void answer('accept') } }, 'Accept'),
      h('button', { type: 'button', class: 'danger', 'data-action': 'reject', 'data-testid': 'gate-reject', on: { click: () => void answer('reject') } }, 'Reject'),
    ];
    const login = isLoginGate(stage);
    if (login) this.liveView = createLiveView({ api, runId: stage.runId, stageId: stage.id, mode: 'interactive' });
    this.element = h(
      'section',
      { class: 'card gate', 'data-gate': stage.id, 'data-testid': 'gate' },
      h('h2', null, login ? `Login: ${stage.id}` : `Gate: ${stage.id}`),
      h('p', { class: 'gate-message' }, stage.gate?.message ?? ''),
      login && h('p', { class: 'login-line' }, LOGIN_LINE),
      this.liveView?.element,
      h('label', { class: 'note' }, 'Note (optional) ', note),
      h('div', { class: 'buttons' }, ...this.buttons),
      this.status,
      errors.element,
    );
  }

  dispose(): void {
    this.liveView?.dispose();
  }

  private setBusy(busy: boolean): void {
    for (const button of this.buttons) button.disabled = busy;
  }
}
