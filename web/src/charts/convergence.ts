// Convergence of one context: the best latency found so far after each evaluation, with the
// optimizer's initial design marked, Open MPI's default as a reference line and, when known,
// the exhaustive optimum. One message size at a time, or all sizes at once as the geometric
// mean of best / default (1 = as fast as the default).
import type uPlot from 'uplot';
import type { ConvergenceContext } from '../api';
import * as fmt from '../format';
import { chartFrame, type Frame } from './uplot_frame';

export const ALL_SIZES = 'all';

// The exhaustive optimum per message size, when known (from the API or another campaign).
export type Optima = Map<number, number>;

export interface ConvergenceSeries {
  x: number[];
  best: (number | null)[];
  design: (number | null)[]; // best so far at initial-design evaluations only
  reference: number | null; // default
  optimum: number | null;
  unit: 'us' | 'relative';
}

function geomean(values: number[]): number | null {
  if (!values.length) return null;
  return Math.exp(values.reduce((a, v) => a + Math.log(v), 0) / values.length);
}

// Whether the relative (all sizes) view is possible: every size has a default latency.
export function canShowAllSizes(ctx: ConvergenceContext): boolean {
  return ctx.sizes.length > 1 && ctx.sizes.every((s) => s.default_us !== null && s.default_us > 0);
}

export function convergenceSeries(ctx: ConvergenceContext, size: string, optima: Optima | null): ConvergenceSeries {
  const n = ctx.evaluations.length;
  const x = Array.from({ length: n }, (_, i) => i + 1);
  const best: (number | null)[] = new Array(n).fill(null);
  let reference: number | null = null;
  let optimum: number | null = null;
  let unit: 'us' | 'relative' = 'us';
  if (size === ALL_SIZES) {
    unit = 'relative';
    for (let i = 0; i < n; i++) {
      const ratios: number[] = [];
      for (const s of ctx.sizes) {
        const v = s.best_us[i];
        if (v !== null && v !== undefined && s.default_us) ratios.push(v / s.default_us);
      }
      best[i] = ratios.length === ctx.sizes.length ? geomean(ratios) : null;
    }
    reference = 1;
    const opt = ctx.sizes.map((s) => (s.exhaustive_us ?? optima?.get(s.msg_size) ?? NaN) / (s.default_us ?? NaN));
    optimum = opt.every((v) => Number.isFinite(v) && v > 0) ? geomean(opt) : null;
  } else {
    const s = ctx.sizes.find((z) => String(z.msg_size) === size);
    if (s) {
      for (let i = 0; i < n; i++) best[i] = s.best_us[i] ?? null;
      reference = s.default_us;
      optimum = s.exhaustive_us ?? optima?.get(s.msg_size) ?? null;
    }
  }
  const design = ctx.evaluations.map((e, i) => (e.initial_design ? best[i] : null));
  return { x, best, design, reference, optimum, unit };
}

export function convergenceChart(ctx: ConvergenceContext, size: string, optima: Optima | null): Frame {
  const s = convergenceSeries(ctx, size, optima);
  const label = size === ALL_SIZES ? 'all sizes' : fmt.bytes(Number(size));
  const value = (v: number | null) => (s.unit === 'us' ? fmt.us(v) : v === null ? '–' : `${v.toFixed(3)} × default`);
  const last = [...s.best].reverse().find((v) => v !== null) ?? null;
  const summary =
    `${s.x.length} evaluations; best so far ${value(last)}` +
    (s.reference !== null ? `; Open MPI default ${value(s.reference)}` : '') +
    (s.optimum !== null ? `; exhaustive optimum ${value(s.optimum)}` : '') +
    (ctx.initial_design_size ? `; the first ${ctx.initial_design_size} evaluations are the initial design` : '');
  const constant = (v: number | null) => s.x.map(() => v);
  const series: uPlot.Series[] = [
    { label: 'evaluation' },
    { label: 'best so far', stroke: '#0072B2', width: 2, value: (_u, v) => value(v), points: { show: false } },
    {
      label: 'initial design',
      stroke: '#7C3AED',
      width: 0,
      paths: () => null,
      points: { show: true, size: 8, fill: '#fff', stroke: '#7C3AED', width: 2 },
      value: (_u, v) => (v === null ? '' : value(v)),
    },
    { label: 'Open MPI default', stroke: '#B42318', width: 1.5, dash: [8, 5], value: (_u, v) => value(v), points: { show: false } },
  ];
  const data: (number | null)[][] = [s.x, s.best, s.design, constant(s.reference)];
  if (s.optimum !== null) {
    series.push({ label: 'exhaustive optimum', stroke: '#009E73', width: 1.5, dash: [2, 3], value: (_u, v) => value(v), points: { show: false } });
    data.push(constant(s.optimum));
  }
  return chartFrame(
    `${ctx.collective}, ${ctx.comm_size} processes — ${label}`,
    summary,
    {
      series,
      scales: { x: { time: false } },
      axes: [
        { label: 'evaluations', size: 40 },
        { label: s.unit === 'us' ? 'latency (µs)' : 'best / default', size: 64, values: (_u, ticks) => ticks.map((t) => (s.unit === 'us' ? String(+t.toPrecision(4)) : t.toFixed(2))) },
      ],
      legend: { live: true },
    },
    data as uPlot.AlignedData,
    `convergence-${ctx.context_id}`,
  );
}
