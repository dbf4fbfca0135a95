// Speed-up over Open MPI's default per message size (default latency / chosen latency), one
// chart per collective, one line per communicator size, with a band of its 95 % interval (of the
// measured noise where the report has no interval).
import type uPlot from 'uplot';
import type { ReportResult } from '../api';
import * as fmt from '../format';
import { colour, withAlpha } from './palette';
import { chartFrame, type Frame } from './uplot_frame';

export function speedupCharts(results: ReportResult[]): Frame[] {
  const byCollective = new Map<string, ReportResult[]>();
  for (const r of results) {
    if (r.speedup === null) continue;
    byCollective.set(r.collective, [...(byCollective.get(r.collective) ?? []), r]);
  }
  const frames: Frame[] = [];
  for (const [collective, rows] of byCollective) {
    const sizes = [...new Set(rows.map((r) => r.msg_size))].sort((a, b) => a - b);
    const commSizes = [...new Set(rows.map((r) => r.comm_size))].sort((a, b) => a - b);
    const x = sizes.map((s) => Math.max(1, s));
    const data: (number | null)[][] = [x];
    const series: uPlot.Series[] = [{ label: 'message size', value: (_u, v) => (v === null ? '' : fmt.bytes(v)) }];
    const bands: uPlot.Band[] = [];
    const at = (p: number, size: number) => rows.find((r) => r.comm_size === p && r.msg_size === size);
    commSizes.forEach((p, i) => {
      const c = colour(i);
      const value = sizes.map((size) => at(p, size)?.speedup ?? null);
      const hi = sizes.map((size) => {
        const r = at(p, size);
        if (!r || r.speedup === null) return null;
        return typeof r.speedup_high === 'number' ? r.speedup_high : r.speedup * (1 + r.noise);
      });
      const lo = sizes.map((size) => {
        const r = at(p, size);
        if (!r || r.speedup === null) return null;
        return typeof r.speedup_low === 'number' ? r.speedup_low : r.speedup * Math.max(0, 1 - r.noise);
      });
      const base = data.length;
      data.push(value, hi, lo);
      series.push(
        { label: `P=${p}`, stroke: c, width: 2, value: (_u, v) => fmt.speedup(v), points: { show: true, size: 5, fill: c } },
        { label: `P=${p} upper`, stroke: withAlpha(c, 0), width: 0, points: { show: false }, value: (_u, v) => fmt.speedup(v) },
        { label: `P=${p} lower`, stroke: withAlpha(c, 0), width: 0, points: { show: false }, value: (_u, v) => fmt.speedup(v) },
      );
      bands.push({ series: [base + 1, base + 2], fill: withAlpha(c, 0.18) });
    });
    data.push(x.map(() => 1));
    series.push({ label: 'default (1×)', stroke: '#666', width: 1, dash: [5, 4], points: { show: false }, value: () => '1×' });
    const best = rows.reduce((m, r) => Math.max(m, r.speedup ?? 0), 0);
    const frame = chartFrame(
        `${collective}: speed-up over Open MPI's default`,
        `${rows.length} message sizes across ${commSizes.length} communicator sizes; best ${fmt.speedup(best)}. The band is the 95 % interval.`,
        {
          series,
          bands,
          scales: { x: { time: false, distr: 3, log: 2 } },
          axes: [
            {
              label: 'message size',
              size: 40,
              // Log-scale ticks may be null (filtered); with many sizes, label every other power of 2.
              values: (_u, ticks) =>
                ticks.map((t) => (t === null || (ticks.length > 10 && Math.round(Math.log2(t)) % 2 !== 0) ? '' : fmt.bytesShort(t))),
            },
            { label: 'speed-up (×)', size: 56, values: (_u, ticks) => ticks.map((t) => `${+t.toFixed(2)}`) },
          ],
          legend: { live: true },
        },
        data as uPlot.AlignedData,
        `speedup-${collective}`,
      );
    // The band edges are drawing aids, not series worth a legend entry.
    frame.plot.root.querySelectorAll<HTMLElement>('.u-legend .u-series').forEach((row, i) => {
      if (String(series[i]?.label ?? '').includes('noise')) row.style.display = 'none';
    });
    frames.push(frame);
  }
  return frames;
}
