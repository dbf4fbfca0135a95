// The result map: message size × communicator size, one panel per collective, each cell
// coloured by the chosen algorithm; segment size, fan-out and latencies in its tooltip.
// Whole-cluster campaigns add predicted cells (sizes not run): drawn faded with a dashed
// outline and marked "predicted" with the model's confidence, apart from the measured ones.
import type { ReportResult } from '../api';
import { h, svg } from '../dom';
import * as fmt from '../format';
import { colour } from './palette';

const CELL_W = 34;
const CELL_H = 26;
const LEFT = 56;
const TOP = 8;
const BOTTOM = 40;

// Which layout a predicted block was tuned for (the 4.1.x / 5.0.x file has no node dimension:
// the block holds what was measured at the size it was predicted from, docs/whole-cluster.md).
function layoutText(r: ReportResult): string {
  const from = `tuned as P=${r.layout_from ?? '?'} was run`;
  if (!r.layout) return `layout: ${from}`;
  const nodes = `${r.layout.nodes} node${r.layout.nodes === 1 ? '' : 's'}`;
  const here = r.layout.ppn != null ? `${nodes} x ${r.layout.ppn} ranks per node` : `${r.comm_size} ranks on ${nodes}`;
  return `layout: ${here} (${from})`;
}

// A cell's tooltip text and its class (pure: the unit tests call them).
export function cellText(r: ReportResult): string {
  if (r.source === 'not_run')
    return [`${r.collective}, ${r.comm_size} processes, ${fmt.bytes(r.msg_size)}: NOT RUN (a listed size the search never reached)`, 'chosen: Open MPI\'s default', r.note ?? null]
      .filter((line) => line)
      .join('\n');
  if (r.source === 'predicted')
    return [
      `${r.collective}, ${r.comm_size} processes, ${fmt.bytes(r.msg_size)}: PREDICTED (not run at this size)`,
      `chosen: ${fmt.configLabel(r.best, r.best_name)}`,
      `confidence that it beats the default: ${r.confidence == null ? 'unknown' : r.confidence.toFixed(2)}`,
      r.note ? r.note : null,
      layoutText(r),
    ]
      .filter((line) => line)
      .join('\n');
  return [
    `${r.collective}, ${r.comm_size} processes, ${fmt.bytes(r.msg_size)}`,
    `chosen: ${fmt.configLabel(r.best, r.best_name)}`,
    `segment size: ${r.best.segsize > 0 ? fmt.bytes(r.best.segsize) : 'none'}; fan-out: ${r.best.fanout > 0 ? r.best.fanout : 'none'}`,
    `latency ${fmt.us(r.best_us)} vs default ${fmt.us(r.default_us)} (${fmt.speedup(r.speedup)})`,
    r.default_within_noise ? 'default within noise: kept the default' : `noise ±${fmt.percent(r.noise)}`,
  ].join('\n');
}

export function cellClass(r: ReportResult): string {
  if (r.source === 'predicted') return 'cell predicted';
  if (r.source === 'not_run') return 'cell not-run';
  return r.default_within_noise ? 'cell within-noise' : 'cell';
}

export function resultMap(results: ReportResult[], predicted: ReportResult[] = []): HTMLElement {
  const root = h('div', { class: 'result-map', 'data-testid': 'result-map' });
  const tooltip = h('div', { class: 'map-tooltip', role: 'tooltip', hidden: true });
  const cells = [
    ...results.map((r) => ({ ...r, source: r.source === 'not_run' ? ('not_run' as const) : ('measured' as const) })),
    ...predicted.map((r) => ({ ...r, source: 'predicted' as const })),
  ];
  const collectives = [...new Set(cells.map((r) => r.collective))].sort();
  for (const collective of collectives) {
    const rows = cells.filter((r) => r.collective === collective);
    const sizes = [...new Set(rows.map((r) => r.msg_size))].sort((a, b) => a - b);
    const comms = [...new Set(rows.map((r) => r.comm_size))].sort((a, b) => a - b);
    // Colour by algorithm id, so a legend entry means the same in every cell of the panel.
    const algorithms = [...new Map(rows.map((r) => [r.best.algorithm, r.best_name])).entries()].sort((a, b) => a[0] - b[0]);
    const index = new Map(algorithms.map(([id], i) => [id, i]));
    const width = LEFT + sizes.length * CELL_W + 8;
    const height = TOP + comms.length * CELL_H + BOTTOM;
    const chart = svg('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${collective}: chosen algorithm per message size and communicator size` });
    comms.forEach((p, row) => {
      const y = TOP + (comms.length - 1 - row) * CELL_H;
      const label = svg('text', { x: LEFT - 6, y: y + CELL_H / 2 + 4, 'text-anchor': 'end', class: 'axis-label' });
      const predictedRow = !rows.some((z) => z.comm_size === p && z.source === 'measured');
      label.textContent = predictedRow ? `P=${p}*` : `P=${p}`;
      chart.appendChild(label);
      sizes.forEach((size, col) => {
        const r = rows.find((z) => z.comm_size === p && z.msg_size === size);
        if (!r) return;
        const rect = svg('rect', {
          x: LEFT + col * CELL_W + 1,
          y: y + 1,
          width: CELL_W - 2,
          height: CELL_H - 2,
          rx: 3,
          fill: r.best.algorithm === 0 ? '#d9d9d9' : colour(index.get(r.best.algorithm) ?? 0),
          class: cellClass(r),
          'data-source': r.source,
          'data-algorithm': r.best.algorithm,
          'data-msg-size': size,
          'data-comm-size': p,
        });
        const title = svg('title');
        title.textContent = cellText(r);
        rect.appendChild(title);
        rect.addEventListener('mousemove', (ev) => {
          tooltip.textContent = cellText(r);
          tooltip.hidden = false;
          const box = root.getBoundingClientRect();
          tooltip.style.left = `${ev.clientX - box.left + 12}px`;
          tooltip.style.top = `${ev.clientY - box.top + 12}px`;
        });
        rect.addEventListener('mouseleave', () => (tooltip.hidden = true));
        chart.appendChild(rect);
      });
    });
    const step = Math.ceil(sizes.length / 10);
    sizes.forEach((size, col) => {
      if (col % step !== 0) return;
      const t = svg('text', { x: LEFT + col * CELL_W + CELL_W / 2, y: TOP + comms.length * CELL_H + 14, 'text-anchor': 'middle', class: 'axis-label' });
      t.textContent = fmt.bytesShort(size);
      chart.appendChild(t);
    });
    const axis = svg('text', { x: LEFT + (sizes.length * CELL_W) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis-title' });
    axis.textContent = 'message size (bytes)';
    chart.appendChild(axis);
    const legend = h(
      'ul',
      { class: 'legend', 'aria-label': `${collective} algorithms` },
      algorithms.map(([id, name]) =>
        h('li', null, h('span', { class: 'swatch', style: `background:${id === 0 ? '#d9d9d9' : colour(index.get(id) ?? 0)}` }), `${name} (${id})`),
      ),
    );
    const note = rows.some((r) => r.source !== 'measured')
      ? h('p', { class: 'muted', 'data-field': 'predicted-note' }, '* sizes not run: predicted (dashed cells: the model’s choice where it is confident, else the default) or never reached by the search’s budget (hatched: the default)')
      : null;
    root.appendChild(h('figure', { class: 'map-panel', 'data-testid': `map-${collective}` }, h('figcaption', null, collective), chart, legend, note));
  }
  root.appendChild(tooltip);
  return root;
}
