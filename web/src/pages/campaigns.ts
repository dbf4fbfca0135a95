// The campaigns page: every campaign with its state, backend, progress (jobs done / planned,
// ETA), best speed-up so far; pause, resume and cancel for admins; the create form.
import { api, ApiError, type Campaign, type Convergence, type Job, type Report } from '../api';
import { h, replaceContent } from '../dom';
import type { DaemonEvent } from '../event_stream';
import * as fmt from '../format';
import { liveRuns, plans, subscribe } from '../live';
import { showNotice } from '../notice';
import { coalesce, type Page } from '../page';
import { bestSpeedup, campaignProgress } from '../progress';
import { isAdmin } from '../session';
import { createForm } from './create_form';
import { actionButtons, stateBadge } from './widgets';

interface Summary {
  campaign: Campaign;
  jobs: Job[];
  contextIds: number[];
  report: Report | null;
  convergence: Convergence | null;
}

async function loadSummary(id: number): Promise<Summary> {
  const [campaign, jobs, report] = await Promise.all([
    api.campaign(id),
    api.jobs(id),
    api.report(id).catch(() => null),
  ]);
  let convergence: Convergence | null = null;
  // The search's best so far matters only until the final results exist.
  if (!report?.results.length && campaign.state !== 'queued') convergence = await api.convergence(id).catch(() => null);
  return { campaign, jobs: jobs.items, contextIds: report?.contexts.map((c) => c.id) ?? [], report, convergence };
}

export function campaignsPage(): Page {
  const summaries = new Map<number, Summary>();
  let order: number[] = [];
  let total = 0;
  let loaded = false;
  let disposed = false;
  const openedAt = Date.now() / 1000;
  const dirty = new Set<number>();

  const countLine = h('p', { class: 'muted', 'data-testid': 'campaign-count' });
  const tableBox = h('div', { class: 'table-wrap' });
  const root = h(
    'section',
    { class: 'page', 'aria-labelledby': 'campaigns-title' },
    h('h1', { id: 'campaigns-title' }, 'Campaigns'),
    countLine,
    tableBox,
    isAdmin()
      ? createForm((c) => {
          summaries.delete(c.id);
          void loadList();
        })
      : h('p', { class: 'muted', 'data-testid': 'read-only-note' }, 'Read-only: this token has the viewer role. Creating, pausing and cancelling campaigns needs an admin token.'),
  );

  const render = () => {
    if (disposed) return;
    countLine.textContent = loaded
      ? `${total} campaign${total === 1 ? '' : 's'}${order.length < total ? ` (newest ${order.length} shown)` : ''}`
      : 'Loading…';
    if (loaded && order.length === 0) {
      replaceContent(tableBox, h('p', { class: 'empty' }, 'No campaigns yet.'));
      return;
    }
    const now = Date.now() / 1000;
    replaceContent(
      tableBox,
      h(
        'table',
        { class: 'campaigns', 'data-testid': 'campaigns-table' },
        h('caption', { class: 'sr-only' }, 'Campaigns, newest first'),
        h(
          'thead',
          null,
          h('tr', null, ['#', 'Name', 'State', 'Backend', 'Strategy', 'Progress', 'Best speed-up', 'Updated', isAdmin() ? 'Actions' : null].map((t) => (t === null ? null : h('th', { scope: 'col' }, t)))),
        ),
        h('tbody', null, order.map((id) => row(id, now))),
      ),
    );
  };

  const row = (id: number, now: number) => {
    const s = summaries.get(id);
    if (!s) return h('tr', { 'data-campaign-id': id }, h('td', null, String(id)), h('td', { colspan: 8 }, 'Loading…'));
    const c = s.campaign;
    const progress = campaignProgress(c, s.jobs, plans.get(id), s.contextIds, now);
    const best = bestSpeedup(s.report, s.convergence);
    const live = liveRuns.get(id);
    const jobsText = `${progress.jobsDone} / ${progress.jobsPlanned ?? '?'} jobs`;
    return h(
      'tr',
      { 'data-campaign-id': id, 'data-testid': `campaign-row-${id}` },
      h('td', null, String(id)),
      h('td', null, h('a', { href: `#/campaigns/${id}`, 'data-field': 'name' }, c.name)),
      h('td', { 'data-field': 'state' }, stateBadge(c)),
      h('td', { 'data-field': 'backend' }, c.backend),
      h('td', null, c.spec.strategy ?? ''),
      h(
        'td',
        { class: 'progress-cell' },
        h('progress', { max: 1, value: progress.fraction ?? 0, 'aria-label': `campaign ${id} progress: ${jobsText}` }),
        h('span', { 'data-field': 'jobs', 'data-done': progress.jobsDone, 'data-planned': progress.jobsPlanned ?? '' }, jobsText),
        progress.etaSeconds !== null && c.state === 'running' ? h('span', { class: 'muted', 'data-field': 'eta' }, ` · ETA ${fmt.duration(progress.etaSeconds)}`) : null,
        live && c.state === 'running' ? h('span', { class: 'muted live-run' }, ` · ${live.purpose} run ${live.done}/${live.total}`) : null,
      ),
      h(
        'td',
        { 'data-field': 'best-speedup', 'data-value': best?.value ?? '', title: best ? `${best.provisional ? 'best so far in the search' : 'final, re-measured'}: ${best.where}` : '' },
        best ? `${best.provisional ? '≈' : ''}${fmt.speedup(best.value)}` : '–',
      ),
      h('td', null, fmt.time(c.updated_at)),
      isAdmin() ? h('td', null, actionButtons(c, () => reload(id))) : null,
    );
  };

  async function reload(id: number): Promise<void> {
    try {
      summaries.set(id, await loadSummary(id));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        summaries.delete(id);
        order = order.filter((x) => x !== id);
      } else {
        showNotice(`Campaign ${id}: ${(e as Error).message}`);
      }
    }
    render();
  }

  async function loadList(): Promise<void> {
    try {
      const page = await api.campaigns();
      if (disposed) return;
      order = page.items.map((c) => c.id);
      total = page.total;
      loaded = true;
      render();
      // A few at a time: the daemon serves every dashboard and campaign.
      const ids = order.filter((id) => !summaries.has(id) || summaries.get(id)!.campaign.updated_at !== page.items.find((c) => c.id === id)!.updated_at || dirty.has(id));
      for (let i = 0; i < ids.length; i += 4) await Promise.all(ids.slice(i, i + 4).map(reload));
    } catch (e) {
      showNotice(`Cannot list campaigns: ${(e as Error).message}`);
    }
  }

  const reloadDirty = coalesce(() => {
    const ids = [...dirty];
    dirty.clear();
    if (ids.some((id) => !order.includes(id))) void loadList();
    else for (const id of ids) void reload(id);
  }, 700);
  const rerender = coalesce(render, 400);
  const refresh = coalesce(() => void loadList(), 300);

  const unsubscribe = subscribe((event: DaemonEvent) => {
    const id = event.campaign_id;
    if (id === undefined) return;
    // Replayed history only teaches plans; reloading for it would repeat the first load.
    // Run events (one per benchmark run) only move the live counter.
    if (event.time < openedAt - 2 || event.type === 'run') {
      rerender();
      return;
    }
    dirty.add(id);
    reloadDirty();
  });
  const ticker = window.setInterval(rerender, 5000); // ETA and "updated" age

  render();
  void loadList();
  return {
    root,
    refresh,
    dispose() {
      disposed = true;
      unsubscribe();
      window.clearInterval(ticker);
      reloadDirty.cancel();
      rerender.cancel();
      refresh.cancel();
    },
  };
}
