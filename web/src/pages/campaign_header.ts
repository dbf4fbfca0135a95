// The campaign page's header: name and state, the facts of its spec, progress with ETA and the
// run in flight, the error, and (for admins) the pause/resume/cancel buttons.
import { h } from '../dom';
import * as fmt from '../format';
import { liveRuns, plans } from '../live';
import { campaignProgress } from '../progress';
import { isAdmin } from '../session';
import type { CampaignData } from './campaign_data';
import { actionButtons, stateBadge } from './widgets';

const fact = (term: string, value: string, field?: string) => [h('dt', null, term), h('dd', field ? { 'data-field': field } : null, value)];

export function campaignHeader(data: CampaignData, onAction: () => void): Node[] {
  const c = data.campaign;
  const progress = campaignProgress(c, data.jobs, plans.get(c.id), data.report.contexts.map((x) => x.id), Date.now() / 1000);
  const live = liveRuns.get(c.id);
  const spec = c.spec;
  const jobsText = `${progress.jobsDone} / ${progress.jobsPlanned ?? '?'} jobs`;
  return [
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
    isAdmin() ? actionButtons(c, onAction) : null,
  ].filter((x): x is HTMLElement => x !== null);
}
