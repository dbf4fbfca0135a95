// What the dashboard learns from the event stream alone: each context's plan (announced by
// context_started: planned evaluations and search-space size), the run in progress per
// campaign, and recent run failures with their reasons (run events are never stored, so these
// cover what happened while this page was open).
import type { DaemonEvent } from './event_stream';
import type { TuningConfig } from './api';

export interface ContextPlan {
  planned: number; // evaluations the strategy plans; -1 when it does not say
  space: number; // configurations in the search space
  collective: string;
  comm_size: number;
}

export interface LiveRun {
  job_id: number;
  purpose: string;
  done: number;
  total: number;
  at: number; // unix seconds
}

export interface RunFailure {
  job_id: number;
  context_id: number;
  purpose: string;
  config: TuningConfig;
  outcome: string;
  error: string;
  at: number;
}

const MAX_FAILURES = 50;

export const plans = new Map<number, Map<number, ContextPlan>>();
export const liveRuns = new Map<number, LiveRun>();
export const failures = new Map<number, RunFailure[]>();

type Listener = (event: DaemonEvent) => void;
const listeners = new Set<Listener>();

export function subscribe(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function ingest(event: DaemonEvent): void {
  const campaign = event.campaign_id ?? (event.payload.campaign_id as number | undefined);
  const p = event.payload;
  if (campaign !== undefined) {
    if (event.type === 'context_started') {
      let m = plans.get(campaign);
      if (!m) plans.set(campaign, (m = new Map()));
      m.set(Number(p.context_id), {
        planned: Number(p.planned ?? -1),
        space: Number(p.space ?? 0),
        collective: String(p.collective ?? ''),
        comm_size: Number(p.comm_size ?? 0),
      });
    } else if (event.type === 'run') {
      liveRuns.set(campaign, {
        job_id: Number(p.job_id),
        purpose: String(p.purpose ?? ''),
        done: Number(p.done ?? 0),
        total: Number(p.total ?? 0),
        at: event.time,
      });
      if (p.outcome !== 'ok') {
        const list = failures.get(campaign) ?? [];
        list.unshift({
          job_id: Number(p.job_id),
          context_id: Number(p.context_id),
          purpose: String(p.purpose ?? ''),
          config: p.config as TuningConfig,
          outcome: String(p.outcome),
          error: String(p.error ?? ''),
          at: event.time,
        });
        failures.set(campaign, list.slice(0, MAX_FAILURES));
      }
    } else if (event.type === 'job_started') {
      liveRuns.set(campaign, {
        job_id: Number(p.job_id),
        purpose: String(p.purpose ?? ''),
        done: Number(p.already_recorded ?? 0),
        total: Number(p.runs ?? 0),
        at: event.time,
      });
    } else if (event.type === 'job_done' || event.type === 'context_done' || event.type === 'campaign_state') {
      liveRuns.delete(campaign);
    }
  }
  for (const listener of listeners) listener(event);
}
