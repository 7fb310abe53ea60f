import { ApiError, apiPath, type ApiClient } from '../api/api-client';
import { h, replaceChildren } from '../dom/h';
import { formatBytes, formatTime } from '../format/format';
import { errorText } from '../shell/errors.view';
import { parseArtifactList, type ArtifactEntry } from './artifacts.model';

/**
 * The run's artifacts with download buttons. Downloads go through fetch with
 * the bearer token (a plain link cannot carry it), then a blob link.
 */
export class ArtifactsView {
  readonly element: HTMLElement;
  private readonly body = h('div', { 'data-testid': 'artifacts' }, h('p', { class: 'muted' }, 'Loading artifacts…'));
  private loading?: Promise<void>;
  private again = false;

  constructor(
    private readonly runId: string,
    private readonly api: ApiClient,
  ) {
    this.element = h('section', { class: 'card artifacts' }, h('h2', null, 'Artifacts'), this.body);
  }

  /** Reads the list again (after a stage output, at the run's end); calls that overlap a read run once more after it. */
  refresh(): void {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = this.load().finally(() => {
      this.loading = undefined;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    });
  }

  private async load(): Promise<void> {
    let answer: unknown;
    try {
      answer = await this.api.get(apiPath('runs', this.runId, 'artifacts'));
    } catch (error) {
      if (error instanceof ApiError && error.routeMissing) {
        return replaceChildren(
          this.body,
          h('p', { class: 'muted' }, 'No artifacts to show: this api does not list artifacts yet. Each stage\'s envelope names the artifacts it reported.'),
        );
      }
      return replaceChildren(this.body, h('p', { class: 'error-text' }, `The artifacts could not be read: ${errorText(error)}`));
    }
    const entries = parseArtifactList(answer);
    if (!entries) return replaceChildren(this.body, h('p', { class: 'error-text' }, 'The api answered the artifacts list with something the console does not understand.'));
    if (entries.length === 0) return replaceChildren(this.body, h('p', { class: 'muted', 'data-testid': 'no-artifacts' }, 'No artifacts: no stage of this run has stored a file.'));
    replaceChildren(
      this.body,
      h(
        'table',
        null,
        h('thead', null, h('tr', null, h('th', null, 'Stage'), h('th', null, 'Attempt'), h('th', null, 'Name'), h('th', null, 'Size'), h('th', null, 'Type'), h('th', null, 'Written'), h('th'))),
        h('tbody', null, entries.map((e) => this.row(e))),
      ),
    );
  }

  private row(entry: ArtifactEntry): HTMLElement {
    const status = h('span', { class: 'muted' });
    const download = async () => {
      replaceChildren(status, 'Downloading…');
      try {
        const blob = await this.api.blob(apiPath('runs', this.runId, 'artifacts', entry.stageId, entry.attempt, entry.name));
        const url = URL.createObjectURL(blob);
        const link = h('a', { href: url, download: entry.name, 'data-external': true });
        document.body.append(link);
        link.click();
        link.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60_000);
        replaceChildren(status);
      } catch (error) {
        replaceChildren(status, errorText(error));
      }
    };
    return h(
      'tr',
      null,
      h('td', null, entry.stageId),
      h('td', { class: 'num' }, entry.attempt),
      h('td', null, entry.name),
      h('td', { class: 'num' }, formatBytes(entry.sizeBytes)),
      h('td', null, entry.contentType ?? ''),
      h('td', { title: entry.modifiedAt ?? '' }, formatTime(entry.modifiedAt)),
      h('td', null, h('button', { type: 'button', on: { click: () => void download() } }, 'Download'), ' ', status),
    );
  }
}
