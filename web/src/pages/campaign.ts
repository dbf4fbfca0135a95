// One campaign: header and progress, convergence per context, the result map, latency against
// message size, speed-up per message size, the job queue and failures, the rules file and the
// cost. Re-reads what changed when the event stream reports on this campaign. The data comes
// from campaign_data.ts, the tables and the header from campaign_tables.ts / campaign_header.ts,
// the charts from ../charts/.
import { api, ApiError, type VersionInfo } from '../api';
import { ALL_SIZES, canShowAllSizes, convergenceChart, type Optima } from '../charts/convergence';
import { latencyCharts } from '../charts/latency';
import { resultMap } from '../charts/result_map';
import { speedupCharts } from '../charts/speedup';
import type { Frame } from '../charts/uplot_frame';
import { h, replaceContent } from '../dom';
import type { DaemonEvent } from '../event_stream';
import * as fmt from '../format';
import { failures, plans, subscribe } from '../live';
import { showNotice } from '../notice';
import { coalesce, type Page } from '../page';
import { type CampaignData, fetchCampaignData, loadOptima } from './campaign_data';
import { campaignHeader } from './campaign_header';
import { costSection, jobsSection, resultsTable } from './campaign_tables';
import { rulesSection } from './rules';

function section(id: string, title: string, ...content: (Node | null)[]): HTMLElement {
  return h('section', { class: 'card', 'aria-labelledby': `${id}-title`, 'data-testid': `section-${id}` }, h('h2', { id: `${id}-title` }, title), ...content);
}

export function campaignPage(id: number): Page {
  let data: CampaignData | null = null;
  let version: VersionInfo | null = null;
  let optima = new Map<string, Optima>();
  let optimaLoaded = false;
  let disposed = false;
  let frames: Frame[] = [];
  const selectedSize = new Map<number, string>();

  const header = h('div', { class: 'campaign-header' }, h('p', null, 'Loading…'));
  const convergenceBox = h('div', { class: 'chart-grid' });
  const mapBox = h('div');
  const latencyBox = h('div', { class: 'chart-grid latency-grid' });
  const speedupBox = h('div', { class: 'chart-grid' });
  const jobsBox = h('div');
  const rulesBox = h('div');
  const costBox = h('div');
  const root = h(
    'div',
    { class: 'page campaign-page', 'data-campaign-id': id },
    h('p', null, h('a', { href: '#/' }, '← All campaigns')),
    header,
    section('convergence', 'Convergence', h('p', { class: 'muted' }, 'Best latency found so far after each evaluation of the search. Purple rings mark the optimizer’s initial design; the dashed red line is Open MPI’s default; the dotted green line, when shown, is the optimum an exhaustive search found.'), convergenceBox),
    section('results', 'Result map', mapBox),
    section('latency', 'Latency against message size', h('p', { class: 'muted' }, 'Per collective and communicator size, both axes logarithmic: Open MPI’s default (dashed) and the tuned file (solid) at their median latency; the bands span the lowest to the highest run behind each median (the re-measure with the rules file loaded when there is one, else the search and final runs). The strip names the chosen configuration per range of sizes.'), latencyBox),
    section('speedup', 'Speed-up over Open MPI’s default', h('p', { class: 'muted' }, 'Default latency divided by the chosen configuration’s, per message size, from paired runs (the re-measure with the rules file loaded when there is one). Shaded: the 95 % interval (± the measured noise where no interval is known). ~ in the table: a tie.'), speedupBox),
    section('jobs', 'Jobs', jobsBox),
    section('rules', 'Rules file', rulesBox),
    section('cost', 'Cost', costBox),
  );

  const renderHeader = () => {
    if (!data) return;
    replaceContent(header, campaignHeader(data, () => void reload()));
  };

  const renderConvergence = () => {
    if (!data) return;
    for (const f of frames.filter((f) => f.figure.dataset.testid?.startsWith('convergence-'))) f.destroy();
    frames = frames.filter((f) => !f.figure.dataset.testid?.startsWith('convergence-'));
    const contexts = data.convergence.contexts.filter((c) => c.evaluations.length > 0);
    if (!contexts.length) {
      replaceContent(convergenceBox, h('p', { class: 'empty' }, 'No search evaluation yet.'));
      return;
    }
    const panels = contexts.map((ctx) => {
      const choices = [...(canShowAllSizes(ctx) ? [ALL_SIZES] : []), ...ctx.sizes.map((s) => String(s.msg_size))];
      let size = selectedSize.get(ctx.context_id);
      if (!size || !choices.includes(size)) size = choices[0] === ALL_SIZES ? ALL_SIZES : choices[choices.length - 1];
      const selectId = `conv-size-${ctx.context_id}`;
      const select = h(
        'select',
        {
          id: selectId,
          'data-focus-key': selectId,
          onchange: () => {
            selectedSize.set(ctx.context_id, select.value);
            renderConvergence();
          },
        },
        choices.map((c) => h('option', { value: c, selected: c === size }, c === ALL_SIZES ? 'all sizes (relative to default)' : fmt.bytes(Number(c)))),
      );
      const frame = convergenceChart(ctx, size ?? ALL_SIZES, optima.get(`${ctx.collective}/${ctx.comm_size}`) ?? null);
      frames.push(frame);
      return h('div', { class: 'chart-panel' }, h('div', { class: 'chart-controls' }, h('label', { for: selectId }, 'Message size '), select), frame.figure);
    });
    replaceContent(convergenceBox, panels);
  };

  const renderResults = () => {
    if (!data) return;
    for (const f of frames.filter((f) => f.figure.dataset.testid?.startsWith('speedup-'))) f.destroy();
    frames = frames.filter((f) => !f.figure.dataset.testid?.startsWith('speedup-'));
    const results = data.report.results;
    if (!results.length) {
      const msg = 'No final result yet: a context’s results appear when its final re-measurement is done.';
      replaceContent(mapBox, h('p', { class: 'empty' }, msg));
      replaceContent(latencyBox, h('p', { class: 'empty' }, msg));
      replaceContent(speedupBox, h('p', { class: 'empty' }, msg));
      return;
    }
    const table = resultsTable(results);
    replaceContent(mapBox, resultMap(results, data.report.predicted ?? []), h('details', { class: 'table-details' }, h('summary', null, `Table of the ${results.length} results`), h('div', { class: 'table-wrap' }, table)));
    replaceContent(latencyBox, latencyCharts(results));
    const charts = speedupCharts(results);
    frames.push(...charts);
    replaceContent(speedupBox, charts.length ? charts.map((f) => f.figure) : h('p', { class: 'empty' }, 'The default was not measured.'));
  };

  const renderJobs = () => {
    if (!data) return;
    replaceContent(jobsBox, jobsSection(data, failures.get(id) ?? []));
  };

  const renderRules = () => {
    if (!data) return;
    replaceContent(rulesBox, rulesSection(data.campaign, data.rules, version, () => reload()));
  };

  const renderCost = () => {
    if (!data) return;
    replaceContent(costBox, costSection(data, plans.get(id)));
  };

  const renderAll = () => {
    if (disposed || !data) return;
    renderHeader();
    renderConvergence();
    renderResults();
    renderJobs();
    renderRules();
    renderCost();
  };

  async function reload(): Promise<void> {
    try {
      const fresh = await fetchCampaignData(id);
      if (disposed) return;
      data = fresh;
      if (!optimaLoaded) {
        optimaLoaded = true;
        optima = await loadOptima(fresh.campaign, fresh.convergence).catch(() => new Map());
      }
      root.dataset.loaded = 'true';
      renderAll();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        replaceContent(header, h('h1', null, `Campaign ${id}`), h('p', { class: 'error-text' }, e.message));
        return;
      }
      showNotice(`Campaign ${id}: ${(e as Error).message}`);
    }
  }

  const reloadSoon = coalesce(() => void reload(), 800);
  const headerSoon = coalesce(() => {
    renderHeader();
    renderJobs();
  }, 300);
  const openedAt = Date.now() / 1000;
  const unsubscribe = subscribe((event: DaemonEvent) => {
    if (event.campaign_id !== id) return;
    if (event.type === 'run') {
      headerSoon();
      // A new best or a finished job changes the charts; the run itself only the counters.
      return;
    }
    if (event.time < openedAt - 2) {
      headerSoon();
      return;
    }
    reloadSoon();
  });
  const ticker = window.setInterval(() => renderHeader(), 5000);

  void api.version().then((v) => {
    version = v;
    renderRules();
  }).catch(() => undefined);
  void reload();
  return {
    root,
    refresh: () => reloadSoon(),
    dispose() {
      disposed = true;
      unsubscribe();
      reloadSoon.cancel();
      headerSoon.cancel();
      window.clearInterval(ticker);
      for (const f of frames) f.destroy();
    },
  };
}
