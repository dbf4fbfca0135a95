// The campaign page's tables: the chosen configuration per message size, the job queue with
// its failures, and the cost (with the estimate of an exhaustive search for comparison).
import type { ReportResult } from '../api';
import { h } from '../dom';
import * as fmt from '../format';
import type { ContextPlan, RunFailure } from '../live';
import { exhaustiveCost } from '../progress';
import type { CampaignData } from './campaign_data';

export function resultsTable(results: ReportResult[]): HTMLTableElement {
  return h(
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
}

// The newest 200 jobs, their counts per state, and the failures: failed jobs, the campaign's
// error, and the run failures seen live while the page was open (`runFailures`).
export function jobsSection(data: CampaignData, runFailures: RunFailure[]): Node[] {
  const ctxName = new Map(data.report.contexts.map((c) => [c.id, `${c.collective} P=${c.comm_size}`]));
  const jobs = [...data.jobs].reverse();
  const shown = jobs.slice(0, 200);
  const failedJobs = data.jobs.filter((j) => j.state === 'failed');
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
  return [
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
  ];
}

// Where the node time went: the search (what a node-second budget limits), the final phase's
// paired tests, the rules stage's checks; null without the breakdown (older daemons).
export function nodeTimeByPurpose(parts: CampaignData['report']['cost']['by_purpose']): string | null {
  if (!parts) return null;
  const labels: [string, string][] = [
    ['search', 'search'],
    ['final', 'final phase'],
    ['verify', 'trace check'],
    ['remeasure-tuned', 're-measure with the file'],
    ['remeasure-default', 're-measure without it'],
  ];
  const text = labels.filter(([key]) => parts[key]).map(([key, label]) => `${label} ${fmt.duration(parts[key].node_seconds)}`);
  return text.length ? text.join(' · ') : null;
}

// Jobs, runs, benchmark and node time; with the plan known, what an exhaustive search would cost.
export function costSection(data: CampaignData, plan: Map<number, ContextPlan> | undefined): Node[] {
  const cost = data.report.cost;
  const ex = exhaustiveCost(data.campaign, data.report, plan);
  const rows: [string, string, string][] = [
    ['Jobs', String(cost.jobs), 'cost-jobs'],
    ['Benchmark runs', String(cost.runs), 'cost-runs'],
    ['Benchmark time', fmt.duration(cost.benchmark_seconds), 'cost-seconds'],
  ];
  if (cost.node_seconds !== undefined) rows.push(['Node time', fmt.duration(cost.node_seconds), 'cost-node-seconds']);
  const byPurpose = nodeTimeByPurpose(cost.by_purpose);
  if (byPurpose) rows.push(['Node time by purpose', byPurpose, 'cost-by-purpose']);
  if (ex.configurations > 0) {
    rows.push(['Exhaustive search: configurations', `${ex.configurations}${ex.known ? '' : ' (contexts not started yet excluded)'}`, 'exhaustive-configs']);
    rows.push(['Exhaustive search: jobs', String(ex.jobs), 'exhaustive-jobs']);
    rows.push(['Exhaustive search: benchmark time (estimate)', ex.benchmarkSeconds !== null ? fmt.duration(ex.benchmarkSeconds) : '–', 'exhaustive-seconds']);
    if (ex.benchmarkSeconds) rows.push(['This campaign / exhaustive', fmt.percent(cost.benchmark_seconds / ex.benchmarkSeconds), 'cost-fraction']);
  }
  return [
    h('dl', { class: 'facts cost', 'data-testid': 'cost' }, rows.map(([t, v, f]) => [h('dt', null, t), h('dd', { 'data-field': f }, v)])),
    h('p', { class: 'muted' }, 'Exhaustive estimates: every configuration of every context’s search space once per repeat, at this campaign’s mean benchmark time per run. Node time weights each run’s benchmark time by the nodes it held.'),
  ];
}
