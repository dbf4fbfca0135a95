// One campaign: header and progress, convergence per context, the result map, speed-up per
// message size, the job queue and failures, the rules file and the cost. Re-reads what changed
// when the event stream reports on this campaign.
import { api, ApiError, type Campaign, type Convergence, type Job, type Report, type RulesVersion, type VersionInfo } from '../api';
import { ALL_SIZES, canShowAllSizes, convergenceChart, type Optima } from '../charts/convergence';
import { resultMap } from '../charts/result_map';
import { speedupCharts } from '../charts/speedup';
import type { Frame } from '../charts/uplot_frame';
import { h, replaceContent } from '../dom';
import type { DaemonEvent } from '../event_stream';
import * as fmt from '../format';
import { failures, liveRuns, plans, subscribe } from '../live';
import { showNotice } from '../notice';
import { coalesce, type Page } from '../page';
import { campaignProgress, exhaustiveCost } from '../progress';
import { isAdmin } from '../session';
import { rulesSection } from './rules';
import { actionButtons, stateBadge } from './widgets';

interface Data {
  campaign: Campaign;
  jobs: Job[];
  jobsTotal: number;
  convergence: Convergence;
  report: Report;
  rules: RulesVersion | null;
}

function section(id: string, title: string, ...content: (Node | null)[]): HTMLElement {
  return h('section', { class: 'card', 'aria-labelledby': `${id}-title`, 'data-testid': `section-${id}` }, h('h2', { id: `${id}-title` }, title), ...content);
}

// The best latency per (collective, comm size, msg size) of a finished exhaustive campaign on
// the same backend: the true optimum to compare the search against.
async function loadOptima(campaign: Campaign, own: Convergence | null): Promise<Map<string, Optima>> {
  const out = new Map<string, Optima>();
  const take = (conv: Convergence) => {
    for (const ctx of conv.contexts) {
      const key = `${ctx.collective}/${ctx.comm_size}`;
      if (out.has(key)) continue;
      const m: Optima = new Map();
      for (const s of ctx.sizes) {
        const v = s.best_us[s.best_us.length - 1];
        if (v !== null && v !== undefined) m.set(s.msg_size, v);
      }
      out.set(key, m);
    }
  };
  if (campaign.spec.strategy === 'exhaustive' && campaign.state === 'done' && own) {
    take(own);
    return out;
  }
  const list = await api.campaigns(200);
  const wanted = new Set(campaign.spec.contexts.map((c) => `${c.collective}/${c.comm_size}`));
  for (const other of list.items) {
    if (other.id === campaign.id || other.state !== 'done' || other.spec.strategy !== 'exhaustive') continue;
    if (other.backend !== campaign.backend || other.spec.sizes !== campaign.spec.sizes) continue;
    if (!other.spec.contexts.some((c) => wanted.has(`${c.collective}/${c.comm_size}`))) continue;
    take(await api.convergence(other.id));
  }
  return out;
}

export function campaignPage(id: number): Page {
  let data: Data | null = null;
  let version: VersionInfo | null = null;
  let optima = new Map<string, Optima>();
  let optimaLoaded = false;
  let disposed = false;
  let frames: Frame[] = [];
  const selectedSize = new Map<number, string>();

  const header = h('div', { class: 'campaign-header' }, h('p', null, 'Loading…'));
  const convergenceBox = h('div', { class: 'chart-grid' });
  const mapBox = h('div');
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
    section('speedup', 'Speed-up over Open MPI’s default', h('p', { class: 'muted' }, 'Default latency divided by the chosen configuration’s, per message size, from paired runs (the re-measure with the rules file loaded when there is one). Shaded: the 95 % interval (± the measured noise where no interval is known). ~ in the table: a tie.'), speedupBox),
    section('jobs', 'Jobs', jobsBox),
    section('rules', 'Rules file', rulesBox),
    section('cost', 'Cost', costBox),
  );

  const renderHeader = () => {
    if (!data) return;
    const c = data.campaign;
    const progress = campaignProgress(c, data.jobs, plans.get(id), data.report.contexts.map((x) => x.id), Date.now() / 1000);
    const live = liveRuns.get(id);
    const spec = c.spec;
    const jobsText = `${progress.jobsDone} / ${progress.jobsPlanned ?? '?'} jobs`;
    replaceContent(
      header,
      h('h1', { 'data-field': 'name' }, c.name, ' ', stateBadge(c)),
      h(
        'dl',
        { class: 'facts' },
        fact('Campaign', `#${c.id}`),
        fact('Backend', c.backend, 'backend'),
        fact('Strategy', `${spec.strategy ?? ''}${spec.budget ? `, budget ${spec.budget}` : ''}`),
        fact('Message sizes', fmt.sizeRange(spec.sizes)),
        fact('Contexts', spec.contexts.map((x) => `${x.collective} P=${x.comm_size}`).join(', ')),
        fact('Contexts done', `${c.progress?.contexts_done ?? 0} / ${c.progress?.contexts ?? spec.contexts.length}`, 'contexts-done'),
        fact('Runs', String(c.progress?.runs ?? 0), 'runs'),
        fact('Created', fmt.time(c.created_at)),
      ),
      h(
        'div',
        { class: 'progress-line' },
        h('progress', { max: 1, value: progress.fraction ?? 0, 'aria-label': `progress: ${jobsText}` }),
        h('span', { 'data-field': 'jobs', 'data-done': progress.jobsDone }, jobsText),
        progress.etaSeconds !== null && c.state === 'running' ? h('span', { 'data-field': 'eta' }, ` · ETA ${fmt.duration(progress.etaSeconds)}`) : null,
        live && c.state === 'running' ? h('span', { class: 'live-run', 'data-field': 'live-run' }, ` · job ${live.job_id} (${live.purpose}): run ${live.done} / ${live.total}`) : null,
      ),
      c.error ? h('p', { class: 'error-text', 'data-field': 'error' }, c.error) : null,
      isAdmin() ? actionButtons(c, () => reload()) : null,
    );
  };

  const fact = (term: string, value: string, field?: string) => [h('dt', null, term), h('dd', field ? { 'data-field': field } : null, value)];

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
      replaceContent(speedupBox, h('p', { class: 'empty' }, msg));
      return;
    }
    const table = h(
      'table',
      { class: 'results', 'data-testid': 'results-table' },
      h('caption', null, 'Chosen configuration per message size'),
      h('thead', null, h('tr', null, ['Collective', 'P', 'Message size', 'Chosen', 'Latency', 'Default', 'Speed-up', '95 % interval', 'Pairs', 'Noise'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        null,
        results.map((r) =>
          h(
            'tr',
            { 'data-collective': r.collective, 'data-comm-size': r.comm_size, 'data-msg-size': r.msg_size },
            h('td', null, r.collective),
            h('td', null, String(r.comm_size)),
            h('td', null, fmt.bytes(r.msg_size)),
            h('td', { 'data-field': 'chosen', 'data-algorithm': r.best.algorithm }, fmt.configLabel(r.best, r.best_name), r.default_within_noise ? h('span', { class: 'muted' }, ' (default within noise)') : null),
            h('td', { class: 'num', 'data-field': 'best-us', 'data-value': r.best_us }, fmt.us(r.best_us)),
            h('td', { class: 'num', 'data-field': 'default-us', 'data-value': r.default_us ?? '' }, fmt.us(r.default_us)),
            h(
              'td',
              { class: 'num', 'data-field': 'speedup', 'data-value': r.speedup ?? '', 'data-tie': String(r.tie ?? r.default_within_noise), title: r.reverted ? `reverted to the default: ${r.reverted.reason}` : r.tie ? 'a tie: the default is kept, or the interval does not exclude 1×' : '' },
              fmt.speedup(r.speedup),
              (r.tie ?? r.default_within_noise) ? h('span', { class: 'muted', 'data-field': 'tie' }, ' ~') : null,
              r.reverted ? h('span', { class: 'muted', 'data-field': 'reverted' }, ' R') : null,
            ),
            h('td', { class: 'num', 'data-field': 'interval', 'data-low': r.speedup_low ?? '', 'data-high': r.speedup_high ?? '' }, fmt.speedupInterval(r.speedup_low, r.speedup_high)),
            h('td', { class: 'num', 'data-field': 'pairs' }, String(r.pairs ?? 0)),
            h('td', { class: 'num' }, `±${fmt.percent(r.noise)}`),
          ),
        ),
      ),
    );
    replaceContent(mapBox, resultMap(results, data.report.predicted ?? []), h('details', { class: 'table-details' }, h('summary', null, `Table of the ${results.length} results`), h('div', { class: 'table-wrap' }, table)));
    const charts = speedupCharts(results);
    frames.push(...charts);
    replaceContent(speedupBox, charts.length ? charts.map((f) => f.figure) : h('p', { class: 'empty' }, 'The default was not measured.'));
  };

  const renderJobs = () => {
    if (!data) return;
    const ctxName = new Map(data.report.contexts.map((c) => [c.id, `${c.collective} P=${c.comm_size}`]));
    const jobs = [...data.jobs].reverse();
    const shown = jobs.slice(0, 200);
    const failedJobs = data.jobs.filter((j) => j.state === 'failed');
    const runFailures = failures.get(id) ?? [];
    const queueTable = h(
      'table',
      { class: 'jobs', 'data-testid': 'jobs-table' },
      h('caption', { class: 'sr-only' }, 'Jobs of this campaign, newest first'),
      h('thead', null, h('tr', null, ['Job', 'Tag', 'Purpose', 'Context', 'State', 'Backend job id', 'Runs', 'Created', 'Took'].map((t) => h('th', { scope: 'col' }, t)))),
      h(
        'tbody',
        null,
        shown.map((j) =>
          h(
            'tr',
            { 'data-job-id': j.id, class: `job-${j.state}` },
            h('td', null, String(j.id)),
            h('td', { class: 'mono' }, j.tag),
            h('td', null, j.purpose),
            h('td', null, ctxName.get(j.context_id) ?? String(j.context_id)),
            h('td', { 'data-field': 'job-state' }, h('span', { class: `badge job-state-${j.state}` }, j.state)),
            h('td', { class: 'mono', 'data-field': 'backend-job-id' }, j.backend_job_id || '–'),
            h('td', { class: 'num' }, j.configs !== undefined ? `${j.configs} × ${j.repeats ?? 1}` : ''),
            h('td', null, fmt.time(j.created_at)),
            h('td', { class: 'num' }, j.state === 'done' || j.state === 'failed' ? fmt.duration(j.updated_at - j.created_at) : ''),
          ),
        ),
      ),
    );
    const counts = new Map<string, number>();
    for (const j of data.jobs) counts.set(j.state, (counts.get(j.state) ?? 0) + 1);
    replaceContent(
      jobsBox,
      h('p', { 'data-field': 'job-counts' }, `${data.jobsTotal} jobs: `, [...counts].map(([s, n]) => `${n} ${s}`).join(', ') || 'none yet', shown.length < data.jobs.length ? ` (newest ${shown.length} shown)` : ''),
      h('div', { class: 'table-wrap scroll' }, queueTable),
      h(
        'div',
        { class: 'failures', 'data-testid': 'failures' },
        h('h3', null, 'Failures'),
        !failedJobs.length && !runFailures.length && !data.campaign.error ? h('p', { class: 'muted' }, 'None.') : null,
        data.campaign.error ? h('p', { class: 'error-text' }, `Campaign: ${data.campaign.error}`) : null,
        failedJobs.length ? h('ul', null, failedJobs.map((j) => h('li', null, `Job ${j.id} (${j.tag}, backend id ${j.backend_job_id || '–'}) failed`))) : null,
        runFailures.length
          ? h(
              'ul',
              { 'aria-label': 'Run failures seen while this page was open' },
              runFailures.map((f) => h('li', null, `${fmt.time(f.at)} job ${f.job_id} ${f.purpose}, ${fmt.configLabel(f.config)}: ${f.outcome}${f.error ? ` — ${f.error}` : ''}`)),
            )
          : null,
      ),
    );
  };

  const renderRules = () => {
    if (!data) return;
    replaceContent(rulesBox, rulesSection(data.campaign, data.rules, version, () => reload()));
  };

  const renderCost = () => {
    if (!data) return;
    const cost = data.report.cost;
    const ex = exhaustiveCost(data.campaign, data.report, plans.get(id));
    const rows: [string, string, string][] = [
      ['Jobs', String(cost.jobs), 'cost-jobs'],
      ['Benchmark runs', String(cost.runs), 'cost-runs'],
      ['Benchmark time', fmt.duration(cost.benchmark_seconds), 'cost-seconds'],
    ];
    if (ex.configurations > 0) {
      rows.push(['Exhaustive search: configurations', `${ex.configurations}${ex.known ? '' : ' (contexts not started yet excluded)'}`, 'exhaustive-configs']);
      rows.push(['Exhaustive search: jobs', String(ex.jobs), 'exhaustive-jobs']);
      rows.push(['Exhaustive search: benchmark time (estimate)', ex.benchmarkSeconds !== null ? fmt.duration(ex.benchmarkSeconds) : '–', 'exhaustive-seconds']);
      if (ex.benchmarkSeconds)
        rows.push(['This campaign / exhaustive', fmt.percent(cost.benchmark_seconds / ex.benchmarkSeconds), 'cost-fraction']);
    }
    replaceContent(
      costBox,
      h('dl', { class: 'facts cost', 'data-testid': 'cost' }, rows.map(([t, v, f]) => [h('dt', null, t), h('dd', { 'data-field': f }, v)])),
      h('p', { class: 'muted' }, 'Exhaustive estimates: every configuration of every context’s search space once per repeat, at this campaign’s mean benchmark time per run.'),
    );
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
      const [campaign, jobs, convergence, report, rules] = await Promise.all([
        api.campaign(id),
        api.jobs(id),
        api.convergence(id),
        api.report(id),
        api.rules(id).catch((e) => {
          if (e instanceof ApiError && e.status === 404) return null;
          throw e;
        }),
      ]);
      if (disposed) return;
      data = { campaign, jobs: jobs.items, jobsTotal: jobs.total, convergence, report, rules };
      if (!optimaLoaded) {
        optimaLoaded = true;
        optima = await loadOptima(campaign, convergence).catch(() => new Map());
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
