// Latency against message size (both axes logarithmic), one SVG chart per collective and
// communicator size: Open MPI's default (dashed) and the tuned file (solid) at their medians,
// each with a band over the range of the runs behind it, and under the plot a strip naming the
// chosen configuration per range of sizes. The same chart as the HTML report's
// (cli/report_html.cpp; docs/report-html.md).
import type { ReportResult } from '../api';
import { h, svg } from '../dom';
import * as fmt from '../format';

const W = 720;
const H = 330;
const LEFT = 62;
const RIGHT = 14;
const TOP = 10;
const PLOT_BOTTOM = 236;
const STRIP_TOP = 288;
const STRIP_H = 24;
const DEFAULT_COLOUR = '#c2410c';
const TUNED_COLOUR = '#1d4ed8';

type Range = [number, number];

// Colours of algorithm ids in the strip, 0 (Open MPI's default decision) grey: the same as the
// HTML report's (cli/report_html.cpp), so a colour means the same algorithm in both.
const ALGORITHM_COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#edc948', '#76b7b2', '#ff9da7', '#9c755f', '#e15759', '#bab0ac'];
export function algorithmColour(algorithm: number): string {
  return algorithm <= 0 ? '#d0d0d0' : ALGORITHM_COLOURS[(algorithm - 1) % ALGORITHM_COLOURS.length];
}

function validRange(r: Range | null | undefined): Range | null {
  if (!Array.isArray(r) || r.length !== 2) return null;
  const [lo, hi] = r;
  return Number.isFinite(lo) && Number.isFinite(hi) && lo > 0 && hi >= lo ? [lo, hi] : null;
}

function positive(v: number | null | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null;
}

function tickUs(v: number): string {
  return v >= 1000 ? `${+(v / 1000).toPrecision(3)} ms` : `${+v.toPrecision(3)} µs`;
}

// The chosen configuration as the strip and the table name it.
export function configName(r: ReportResult): string {
  return r.best.algorithm === 0 ? 'default' : fmt.configLabel(r.best, r.best_name);
}

export function latencyChart(rows: ReportResult[]): HTMLElement {
  rows = [...rows].sort((a, b) => a.msg_size - b.msg_size);
  const first = rows[0];
  const size = (r: ReportResult) => Math.max(1, r.msg_size);
  const ys: number[] = [];
  for (const r of rows) {
    for (const v of [positive(r.default_us), positive(r.best_us)]) if (v !== null) ys.push(v);
    for (const g of [validRange(r.default_us_range), validRange(r.best_us_range)]) if (g) ys.push(...g);
  }
  const xs = rows.map(size);
  const xlo = Math.log2(Math.min(...xs)) - 0.5;
  const xhi = Math.log2(Math.max(...xs)) + 0.5;
  let ylo = Math.log10(ys.length ? Math.min(...ys) : 1) - 0.05;
  let yhi = Math.log10(ys.length ? Math.max(...ys) : 1) + 0.05;
  if (yhi - ylo < 1) {
    const mid = (ylo + yhi) / 2;
    ylo = mid - 0.5;
    yhi = mid + 0.5;
  }
  const x = (s: number) => LEFT + ((Math.log2(s) - xlo) / (xhi - xlo)) * (W - LEFT - RIGHT);
  const y = (v: number) => PLOT_BOTTOM - ((Math.log10(v) - ylo) / (yhi - ylo)) * (PLOT_BOTTOM - TOP);
  const p = (v: number) => v.toFixed(1);

  const title = `${first.collective}, ${first.comm_size} ranks: latency against message size`;
  const chart = svg('svg', { class: 'latency-chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${title}, Open MPI's default and the tuned file (log-log)` });
  const add = <K extends keyof SVGElementTagNameMap>(parent: Element, tag: K, attrs: Record<string, string | number>, text?: string) => {
    const el = svg(tag, attrs);
    if (text !== undefined) el.textContent = text;
    parent.appendChild(el);
    return el;
  };

  // Axes and grid: 1-2-5 latency ticks (powers of ten only on a wide range), power-of-2 sizes.
  const wide = yhi - ylo > 2.5;
  for (let e = Math.floor(ylo); e <= Math.ceil(yhi); e++)
    for (const m of wide ? [1] : [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) < ylo || Math.log10(v) > yhi) continue;
      add(chart, 'line', { class: 'grid', x1: p(LEFT), x2: p(W - RIGHT), y1: p(y(v)), y2: p(y(v)) });
      add(chart, 'text', { x: p(LEFT - 6), y: p(y(v) + 4), 'text-anchor': 'end', class: 'axis-label' }, tickUs(v));
    }
  const firstPow = Math.ceil(xlo);
  const lastPow = Math.floor(xhi);
  const step = lastPow - firstPow > 12 ? 2 : 1;
  for (let e = firstPow; e <= lastPow; e += step) {
    const s = 2 ** e;
    add(chart, 'line', { class: 'grid', x1: p(x(s)), x2: p(x(s)), y1: p(TOP), y2: p(PLOT_BOTTOM) });
    add(chart, 'text', { x: p(x(s)), y: p(PLOT_BOTTOM + 15), 'text-anchor': 'middle', class: 'axis-label' }, fmt.bytesShort(s));
  }
  add(chart, 'line', { class: 'axis', x1: p(LEFT), x2: p(LEFT), y1: p(TOP), y2: p(PLOT_BOTTOM) });
  add(chart, 'line', { class: 'axis', x1: p(LEFT), x2: p(W - RIGHT), y1: p(PLOT_BOTTOM), y2: p(PLOT_BOTTOM) });
  add(chart, 'text', { x: p((LEFT + W - RIGHT) / 2), y: p(PLOT_BOTTOM + 30), 'text-anchor': 'middle', class: 'axis-label' }, 'message size (log)');

  // Bands over each run of consecutive sizes that have a range (a lone size: a narrow box).
  const band = (key: 'default_us_range' | 'best_us_range', fill: string, which: string) => {
    let seg: [number, Range][] = [];
    const flush = () => {
      if (!seg.length) return;
      let d: string;
      if (seg.length === 1) {
        const [s, [lo, hi]] = seg[0];
        d = `M${p(x(s) - 4)} ${p(y(hi))} L${p(x(s) + 4)} ${p(y(hi))} L${p(x(s) + 4)} ${p(y(lo))} L${p(x(s) - 4)} ${p(y(lo))} Z`;
      } else {
        d = seg.map(([s, [, hi]], i) => `${i ? 'L' : 'M'}${p(x(s))} ${p(y(hi))}`).join(' ');
        d += ' ' + [...seg].reverse().map(([s, [lo]]) => `L${p(x(s))} ${p(y(lo))}`).join(' ') + ' Z';
      }
      add(chart, 'path', { class: `band band-${which}`, d, fill, 'fill-opacity': 0.17 });
      seg = [];
    };
    for (const r of rows) {
      const g = validRange(r[key]);
      if (g) seg.push([size(r), g]);
      else flush();
    }
    flush();
  };
  band('default_us_range', DEFAULT_COLOUR, 'default');
  band('best_us_range', TUNED_COLOUR, 'tuned');

  // Lines and points; the default last, dashed over the tuned line where the file keeps it.
  const line = (value: (r: ReportResult) => number | null, stroke: string, which: string, dash: string | null) => {
    let d = '';
    let pen = false;
    for (const r of rows) {
      const v = value(r);
      if (v === null) {
        pen = false;
        continue;
      }
      d += `${pen ? ' L' : d ? ' M' : 'M'}${p(x(size(r)))} ${p(y(v))}`;
      pen = true;
    }
    if (d) add(chart, 'path', { class: `line line-${which}`, d, fill: 'none', stroke, 'stroke-width': 2, ...(dash ? { 'stroke-dasharray': dash } : {}) });
    for (const r of rows) {
      const v = value(r);
      if (v === null) continue;
      const dot = add(chart, 'circle', { class: `point point-${which}`, r: 3, cx: p(x(size(r))), cy: p(y(v)), fill: stroke, 'data-msg-size': r.msg_size, 'data-latency-us': v });
      add(dot, 'title', {}, `${which} ${fmt.bytes(r.msg_size)}: ${fmt.us(v)}`);
    }
  };
  line((r) => positive(r.best_us), TUNED_COLOUR, 'tuned', null);
  line((r) => positive(r.default_us), DEFAULT_COLOUR, 'default', '6 4');

  // The strip: one box per range of consecutive sizes with the same chosen configuration.
  const algorithms = [...new Set(rows.map((r) => r.best.algorithm))].sort((a, b) => a - b);
  add(chart, 'text', { x: p(LEFT), y: p(STRIP_TOP - 6), class: 'axis-label' }, 'chosen configuration per message size');
  for (let i = 0; i < rows.length; ) {
    let j = i;
    const name = configName(rows[i]);
    while (j + 1 < rows.length && configName(rows[j + 1]) === name) j++;
    const left = i === 0 ? LEFT : (x(size(rows[i - 1])) + x(size(rows[i]))) / 2;
    const right = j + 1 === rows.length ? W - RIGHT : (x(size(rows[j])) + x(size(rows[j + 1]))) / 2;
    const g = add(chart, 'g', { class: 'algo-range', 'data-algorithm': rows[i].best.algorithm, 'data-from': rows[i].msg_size, 'data-to': rows[j].msg_size, 'data-label': name });
    const span = rows[i].msg_size === rows[j].msg_size ? fmt.bytes(rows[i].msg_size) : `${fmt.bytes(rows[i].msg_size)} – ${fmt.bytes(rows[j].msg_size)}`;
    add(g, 'title', {}, `${span}: ${name}`);
    add(g, 'rect', { x: p(left), y: p(STRIP_TOP), width: p(Math.max(1, right - left)), height: STRIP_H, fill: algorithmColour(rows[i].best.algorithm), stroke: '#fff' });
    if (right - left > 6.5 * name.length + 8)
      add(g, 'text', { x: p((left + right) / 2), y: p(STRIP_TOP + STRIP_H / 2 + 4), 'text-anchor': 'middle', class: 'strip-label' }, name);
    i = j + 1;
  }

  const legend = h(
    'p',
    { class: 'chart-legend' },
    h('span', null, h('span', { class: 'swatch', style: `background:${DEFAULT_COLOUR}` }), 'Open MPI’s default'),
    h('span', null, h('span', { class: 'swatch', style: `background:${TUNED_COLOUR}` }), 'tuned file'),
    algorithms.map((a) => h('span', { 'data-algorithm': a }, h('span', { class: 'swatch', style: `background:${algorithmColour(a)}` }), a === 0 ? 'default decision' : `${rows.find((r) => r.best.algorithm === a)?.best_name ?? '?'} (${a})`)),
  );
  return h(
    'figure',
    { class: 'chart latency', 'data-testid': `latency-${first.collective}-${first.comm_size}`, 'data-points': rows.length },
    h('figcaption', null, title),
    h('p', { class: 'sr-only' }, 'Lines: median latency per message size; bands: lowest to highest run; strip: the chosen configuration per range of sizes.'),
    chart,
    legend,
  );
}

// One chart per (collective, comm size), in the report's order.
export function latencyCharts(results: ReportResult[]): HTMLElement[] {
  const groups = new Map<string, ReportResult[]>();
  for (const r of results) {
    const key = `${r.collective}/${r.comm_size}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map(latencyChart);
}
