// What the campaign page shows, fetched from the daemon: the campaign, its jobs, convergence,
// report and rules file in one go, and the optima of a finished exhaustive campaign on the same
// backend (the reference line of the convergence charts).
import { api, ApiError, type Campaign, type Convergence, type Job, type Report, type RulesVersion } from '../api';
import type { Optima } from '../charts/convergence';

export interface CampaignData {
  campaign: Campaign;
  jobs: Job[];
  jobsTotal: number;
  convergence: Convergence;
  report: Report;
  rules: RulesVersion | null;
}

// Everything at once; a campaign without a rules file yet has rules = null. Throws ApiError
// (404 for an unknown campaign).
export async function fetchCampaignData(id: number): Promise<CampaignData> {
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
  return { campaign, jobs: jobs.items, jobsTotal: jobs.total, convergence, report, rules };
}

// The best latency per (collective, comm size, msg size) of a finished exhaustive campaign on
// the same backend: the true optimum to compare the search against.
export async function loadOptima(campaign: Campaign, own: Convergence | null): Promise<Map<string, Optima>> {
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
