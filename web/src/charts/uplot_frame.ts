// A uPlot chart inside a labelled figure that follows its container's width.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from '../dom';

export interface Frame {
  figure: HTMLElement;
  plot: uPlot;
  destroy(): void;
}

// `summary`: a sentence for screen readers describing what the chart shows.
export function chartFrame(
  title: string,
  summary: string,
  options: Omit<uPlot.Options, 'width' | 'height'> & { height?: number },
  data: uPlot.AlignedData,
  testId: string,
): Frame {
  const host = h('div', { class: 'chart-host' });
  const figure = h(
    'figure',
    { class: 'chart', 'data-testid': testId, 'data-points': String(data[0]?.length ?? 0) },
    h('figcaption', null, title),
    h('p', { class: 'sr-only' }, summary),
    host,
  );
  const height = options.height ?? 260;
  const plot = new uPlot({ ...options, width: 600, height }, data, host);
  plot.root.setAttribute('role', 'img');
  plot.root.setAttribute('aria-label', `${title}. ${summary}`);
  const fit = () => {
    const width = Math.max(280, Math.floor(host.clientWidth || figure.clientWidth || 600));
    if (width !== plot.width) plot.setSize({ width, height });
  };
  const observer = new ResizeObserver(fit);
  observer.observe(figure);
  requestAnimationFrame(fit);
  return {
    figure,
    plot,
    destroy() {
      observer.disconnect();
      plot.destroy();
    },
  };
}

export const axisFont = '12px system-ui, sans-serif';
