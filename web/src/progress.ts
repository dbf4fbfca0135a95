// Progress, ETA, best speed-up and cost estimates of a campaign, from what the API and the
// event stream report. Pure functions: no DOM, no fetching.
import type { Campaign, Convergence, Job, Report } from './api';
import type { ContextPlan } from './live';

export interface Progress {
  jobsDone: number;
  jobsPlanned: number | null; // null when some context's budget is unknown
  fraction: number | null; // 0..1
  etaSeconds: number | null; // null when unknown or finished
  meanJobSeconds: number | null;
}

const FINISHED = new Set(['done', 'cancelled']);

// Evaluations a context's search will make: the spec's stop rule or budget, else what the
// strategy announced (context_started), else unknown.
export function plannedEvaluations(campaign: Campaign, plan: ContextPlan | undefined): number | null {
  const spec = campaign.spec;
  const maxEvals = spec.stop?.max_evaluations ?? 0;
  if (maxEvals > 0) return maxEvals;
  if ((spec.budget ?? 0) > 0) return spec.budget!;
  if (plan && plan.planned > 0) return plan.planned;
  if (spec.strategy === 'exhaustive' && plan && plan.space > 0) return plan.space;
  return null;
}

// Backends that run no real Open MPI: the rules stage skips verification and re-measurement.
const MODEL_BACKENDS = new Set(['sim', 'replay']);

// Jobs of the rules stage per context: one verification job, then (tuned, default) pairs.
export function rulesStageJobs(campaign: Campaign): number {
  if (campaign.spec.verify === false || MODEL_BACKENDS.has(campaign.backend)) return 0;
  return 1 + 2 * Math.max(1, campaign.spec.final_repeats ?? 3);
}

// Jobs: per context, ceil(evaluations / batch_size) search jobs, one final job and the rules
// stage's jobs.
export function campaignProgress(
  campaign: Campaign,
  jobs: Job[],
  plans: Map<number, ContextPlan> | undefined,
  contextIds: number[],
  nowSeconds: number,
): Progress {
  const done = jobs.filter((j) => j.state === 'done').length;
  const batch = Math.max(1, campaign.spec.batch_size ?? 8);
  const contexts = contextIds.length || campaign.spec.contexts.length;
  let planned: number | null = 0;
  for (let i = 0; i < contexts; i++) {
    const id = contextIds[i];
    const evals = plannedEvaluations(campaign, id !== undefined ? plans?.get(id) : undefined);
    if (evals === null) {
      planned = null;
      break;
    }
    planned += Math.ceil(evals / batch) + 1 + rulesStageJobs(campaign);
  }
  // Jobs beyond the estimate (e.g. a repeated verification) extend it.
  if (planned !== null) planned = Math.max(planned, jobs.length);
  const durations = jobs
    .filter((j) => j.state === 'done' && j.updated_at > j.created_at)
    .map((j) => j.updated_at - j.created_at);
  const meanJob = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : null;
  const finished = FINISHED.has(campaign.state);
  let fraction: number | null = null;
  if (campaign.state === 'done') fraction = 1;
  else if (planned) fraction = Math.min(1, done / planned);
  let eta: number | null = null;
  if (!finished && campaign.state !== 'failed' && planned !== null && meanJob !== null) {
    const running = jobs.find((j) => j.state === 'running' || j.state === 'submitting');
    const elapsedOfCurrent = running ? Math.min(meanJob, Math.max(0, nowSeconds - running.created_at)) : 0;
    eta = Math.max(0, (planned - done) * meanJob - elapsedOfCurrent);
  }
  return { jobsDone: done, jobsPlanned: planned, fraction, etaSeconds: eta, meanJobSeconds: meanJob };
}

export interface BestSpeedup {
  value: number;
  provisional: boolean; // from search runs, before the final re-measurement
  where: string; // "bcast P=4 at 64 KiB"
}

// The best final speed-up of the report; while no context is final, the best so far of the
// search against the default's measured latency.
export function bestSpeedup(report: Report | null, convergence: Convergence | null): BestSpeedup | null {
  let best: BestSpeedup | null = null;
  for (const r of report?.results ?? []) {
    if (r.speedup !== null && (!best || r.speedup > best.value))
      best = { value: r.speedup, provisional: false, where: `${r.collective} P=${r.comm_size} at ${r.msg_size} B` };
  }
  if (best) return best;
  for (const c of convergence?.contexts ?? []) {
    for (const s of c.sizes) {
      const last = s.best_us[s.best_us.length - 1];
      if (s.default_us === null || last === null || last === undefined || last <= 0) continue;
      const v = s.default_us / last;
      if (!best || v > best.value)
        best = { value: v, provisional: true, where: `${c.collective} P=${c.comm_size} at ${s.msg_size} B` };
    }
  }
  return best;
}

export interface ExhaustiveCost {
  configurations: number;
  jobs: number;
  benchmarkSeconds: number | null;
  known: boolean; // every context's space size is known
}

// What trying every configuration of every context would have cost, at this campaign's mean
// benchmark time per run.
export function exhaustiveCost(
  campaign: Campaign,
  report: Report,
  plans: Map<number, ContextPlan> | undefined,
): ExhaustiveCost {
  const batch = Math.max(1, campaign.spec.batch_size ?? 8);
  const repeats = Math.max(1, campaign.spec.repeats ?? 1);
  let configurations = 0;
  let jobs = 0;
  let known = true;
  for (const c of report.contexts) {
    const space = c.space > 0 ? c.space : (plans?.get(c.id)?.space ?? 0);
    if (space <= 0) {
      known = false;
      continue;
    }
    configurations += space;
    jobs += Math.ceil(space / batch) + 1;
  }
  const perRun = report.cost.runs > 0 ? report.cost.benchmark_seconds / report.cost.runs : null;
  return {
    configurations,
    jobs,
    benchmarkSeconds: perRun !== null ? configurations * repeats * perRun : null,
    known,
  };
}
