// The daemon's REST API (/api/v1) as the dashboard uses it: typed shapes of its JSON answers
// (see server/openapi.json) and one fetch wrapper that adds the bearer token and turns error
// bodies {"error": {"code", "message"}} into ApiError.

export interface TuningConfig {
  algorithm: number;
  segsize: number;
  fanout: number;
}

export interface ContextSpec {
  collective: string;
  comm_size: number;
  nodes?: number;
  ppn?: number;
}

export interface CampaignSpec {
  name?: string;
  backend: string;
  contexts: ContextSpec[];
  sizes: string;
  strategy?: string;
  budget?: number;
  repeats?: number;
  seed?: number;
  iterations?: number;
  warmup?: number;
  batch_size?: number;
  final_candidates?: number;
  final_repeats?: number;
  run_timeout_s?: number;
  rules_format?: string;
  verify?: boolean;
  stop?: { max_evaluations?: number; max_benchmark_seconds?: number; thesis_rule?: boolean };
}

export type CampaignState = 'queued' | 'running' | 'paused' | 'done' | 'failed' | 'cancelled';

export interface Campaign {
  id: number;
  name: string;
  state: CampaignState;
  backend: string;
  error: string;
  created_at: number;
  updated_at: number;
  active: boolean;
  pending_action: string | null;
  spec: CampaignSpec;
  progress?: { contexts: number; contexts_done: number; runs: number };
}

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

export interface Job {
  id: number;
  campaign_id: number;
  context_id: number;
  tag: string;
  backend: string;
  backend_job_id: string;
  purpose: string; // search, final, verify, remeasure-tuned, remeasure-default
  state: string; // submitting, running, done, cancelled (a job whose runs failed is done)
  created_at: number;
  updated_at: number;
  configs?: number;
  repeats?: number;
}

export interface ConvergenceSize {
  msg_size: number;
  default_us: number | null;
  best_us: (number | null)[]; // best so far after evaluation 1..n
  exhaustive_us?: number | null; // the true optimum, when the daemon knows it (sim, replay)
}

export interface ConvergenceContext {
  context_id: number;
  collective: string;
  comm_size: number;
  state: string;
  initial_design_size: number | null;
  evaluations: {
    n: number;
    run_id: number;
    config: TuningConfig;
    outcome: string;
    initial_design: boolean | null;
  }[];
  sizes: ConvergenceSize[];
}

export interface Convergence {
  campaign_id: number;
  contexts: ConvergenceContext[];
}

export interface ReportResult {
  collective: string;
  comm_size: number;
  msg_size: number;
  default_us: number | null;
  best: TuningConfig;
  best_name: string;
  best_us: number;
  speedup: number | null;
  // The speed-up's interval (at least 95 %) and the paired runs behind it; null when unknown.
  speedup_low?: number | null;
  speedup_high?: number | null;
  pairs?: number;
  // A tie: the default kept, or an interval that does not exclude 1.
  tie?: boolean;
  // Reverted to the default after the re-measure found the file slower (why).
  reverted?: { reason: string } | null;
  noise: number;
  default_within_noise: boolean;
  // [lowest, highest] latency of the runs behind default_us / best_us; null without runs.
  default_us_range?: [number, number] | null;
  best_us_range?: [number, number] | null;
  // Where the speed-up and its interval come from: the re-measure with the file loaded, or
  // the final phase's pairs.
  speedup_source?: 'remeasure' | 'final';
  // Whole-cluster campaigns: "predicted" cells were not run at that communicator size; their
  // confidence is the model's probability that the choice beats the default. "not_run": a
  // listed size the search's budget never reached, where the model is confident of nothing:
  // the default stands (note says why).
  source?: 'measured' | 'predicted' | 'not_run';
  confidence?: number | null;
  layout_from?: number;
  layout?: { nodes: number; ppn: number | null };
  note?: string;
  // A budget for the whole campaign could not pay for testing the candidate here: the default
  // stands untested (note says so).
  untested_for_money?: boolean;
}

export interface ReportContext {
  id: number;
  collective: string;
  comm_size: number;
  nodes: number;
  ppn: number;
  state: string;
  evaluations: number;
  space: number;
}

export interface Report {
  campaign: { id: number; name: string; state: string; spec: CampaignSpec; error: string };
  contexts: ReportContext[];
  results: ReportResult[];
  // Whole-cluster campaigns: the predicted cells (absent or empty otherwise).
  predicted?: ReportResult[];
  cost: {
    jobs: number;
    runs: number;
    benchmark_seconds: number;
    node_seconds?: number;
    // The same per job purpose: search, final, verify, remeasure-tuned, remeasure-default.
    by_purpose?: Record<string, { jobs: number; runs: number; benchmark_seconds: number; node_seconds: number }>;
  };
}

export interface RulesVersion {
  id: number;
  campaign_id: number | null;
  format: string;
  validation: unknown;
  verification: unknown;
  fingerprint: unknown;
  deployed_to: string;
  created_at: number;
  bytes: number;
  content?: string;
}

export interface VersionInfo {
  name: string;
  version: string;
  api: string;
  backends: { name: string; max_concurrent_jobs: number }[];
  known_backends: string[];
  tls: boolean;
  rules_dir: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let token: string | null = null;

export function setToken(value: string | null): void {
  token = value;
}

export function authHeaders(): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

interface RequestOptions {
  method?: 'GET' | 'POST';
  body?: unknown; // sent as JSON when given
  rawBody?: string; // sent as it is (with the JSON content type) when given
  signal?: AbortSignal;
}

async function request(path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders() };
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method: options.method ?? 'GET', headers, body, signal: options.signal });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', 'cannot reach the colltune daemon');
  }
  if (!response.ok) {
    let code = `http_${response.status}`;
    let message = `HTTP ${response.status}`;
    try {
      const err = (await response.json()) as { error?: { code?: string; message?: string } };
      if (err.error?.code) code = err.error.code;
      if (err.error?.message) message = err.error.message;
    } catch {
      // Not a JSON error body: keep the status line.
    }
    throw new ApiError(response.status, code, message);
  }
  return response;
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return (await (await request(path, { signal })).json()) as T;
}

export async function getText(path: string): Promise<string> {
  return (await request(path)).text();
}

export async function postJson<T>(path: string, body?: unknown, rawBody?: string): Promise<T> {
  return (await (await request(path, { method: 'POST', body, rawBody })).json()) as T;
}

// The status of a POST with no body (used to learn a token's role without changing anything).
export async function probeStatus(path: string): Promise<number> {
  try {
    await request(path, { method: 'POST' });
    return 200;
  } catch (e) {
    if (e instanceof ApiError) return e.status;
    throw e;
  }
}

export const api = {
  version: () => getJson<VersionInfo>('/api/v1/version'),
  campaigns: (limit = 200) => getJson<Page<Campaign>>(`/api/v1/campaigns?limit=${limit}`),
  campaign: (id: number) => getJson<Campaign>(`/api/v1/campaigns/${id}`),
  jobs: (id: number) => getJson<Page<Job>>(`/api/v1/campaigns/${id}/jobs?limit=1000`),
  convergence: (id: number) => getJson<Convergence>(`/api/v1/campaigns/${id}/convergence`),
  report: (id: number) => getJson<Report>(`/api/v1/campaigns/${id}/report`),
  rules: (id: number) => getJson<RulesVersion>(`/api/v1/campaigns/${id}/rules`),
  create: (specText: string) => postJson<Campaign>('/api/v1/campaigns', undefined, specText),
  transition: (id: number, action: 'pause' | 'resume' | 'cancel') =>
    postJson<Campaign>(`/api/v1/campaigns/${id}/${action}`),
  // `force` deploys a version that was not verified on the real Open MPI (the daemon refuses
  // it otherwise with 409 not_verified and the reason); the deploy is recorded as forced.
  deploy: (rulesId: number, name?: string, force = false) =>
    postJson<{ deployment: { target: string; version: number | string }; forced?: string }>(
      `/api/v1/rules/${rulesId}/deploy`,
      { ...(name ? { name } : {}), ...(force ? { force: true } : {}) },
    ),
};
