import { setText, svg } from '../dom/h';
import type { RunModel } from './run.model';
import { layoutStageGraph, NODE_HEIGHT, NODE_WIDTH } from './stage-graph.layout';

/**
 * The run's stages as an SVG graph (left to right along the edges), each node
 * coloured by its state. Built once per run; `update` changes states only.
 * A conditional edge is dashed and its `if` is its tooltip.
 */
export class StageGraphView {
  readonly element: SVGSVGElement;
  private readonly nodes = new Map<string, { group: SVGGElement; state: SVGTextElement; title: SVGTitleElement }>();

  constructor(model: RunModel, onSelect: (stageId: string) => void) {
    const layout = layoutStageGraph(
      model.stages.map((s) => s.id),
      model.edges,
    );
    this.element = svg('svg', {
      class: 'stage-graph',
      'data-testid': 'stage-graph',
      viewBox: `0 0 ${layout.width} ${layout.height}`,
      width: layout.width,
      height: layout.height,
      role: 'img',
      'aria-label': `Stage graph of run ${model.id}`,
    });
    const marker = svg(
      'marker',
      { id: 'sf-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
      svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }),
    );
    this.element.append(svg('defs', null, marker));
    for (const edge of layout.edges) {
      this.element.append(
        svg(
          'path',
          { d: edge.path, class: edge.if === undefined ? 'edge' : 'edge conditional', 'marker-end': 'url(#sf-arrow)' },
          svg('title', null, edge.if === undefined ? `${edge.from} → ${edge.to}` : `${edge.from} → ${edge.to} if: ${edge.if}`),
        ),
      );
    }
    for (const node of layout.nodes) {
      const stage = model.stages.find((s) => s.id === node.id);
      const state = svg('text', { x: 12, y: 38, class: 'node-state' });
      const title = svg('title');
      const group = svg(
        'g',
        {
          class: 'node',
          transform: `translate(${node.x} ${node.y})`,
          tabindex: 0,
          role: 'button',
          'data-stage': node.id,
          on: {
            click: () => onSelect(node.id),
            keydown: (e) => {
              if (e.key === 'Enter' || e.key === ' ') onSelect(node.id);
            },
          },
        },
        title,
        svg('rect', { width: NODE_WIDTH, height: NODE_HEIGHT, rx: 8 }),
        svg('text', { x: 12, y: 20, class: 'node-id' }, truncate(node.id, 20)),
        svg('text', { x: NODE_WIDTH - 10, y: 20, class: 'node-kind', 'text-anchor': 'end' }, stage?.browser ? `${stage.kind} · browser` : (stage?.kind ?? '')),
        state,
      );
      this.element.append(group);
      this.nodes.set(node.id, { group, state, title });
    }
    this.update(model);
  }

  update(model: RunModel): void {
    for (const stage of model.stages) {
      const node = this.nodes.get(stage.id);
      if (!node) continue;
      node.group.setAttribute('class', `node state-${stage.state}`);
      node.group.setAttribute('data-state', stage.state);
      setText(node.state, stage.attempt > 1 ? `${stage.state.replace('_', ' ')} · attempt ${stage.attempt}` : stage.state.replace('_', ' '));
      setText(node.title, stage.reason ? `${stage.id}: ${stage.state}, ${stage.reason}` : `${stage.id}: ${stage.state}`);
    }
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
