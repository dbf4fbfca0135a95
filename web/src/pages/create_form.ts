// The "new campaign" form (admins). It builds the campaign spec JSON that POST
// /api/v1/campaigns takes and shows it; the JSON box can be edited by hand and is what is sent.
import { api, type Campaign, type CampaignSpec } from '../api';
import { h } from '../dom';

const COLLECTIVES = ['bcast', 'allreduce', 'reduce', 'gather', 'allgather', 'alltoall', 'scatter', 'reduce_scatter', 'reduce_scatter_block', 'allgatherv', 'alltoallv', 'barrier'];
const STRATEGIES = ['bo', 'bo-per-size', 'random', 'exhaustive'];

function field(id: string, label: string, control: HTMLElement, help?: string): HTMLElement {
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    control,
    help ? h('small', { id: `${id}-help` }, help) : null,
  );
}

export function createForm(onCreated: (c: Campaign) => void): HTMLElement {
  const name = h('input', { id: 'new-name', type: 'text', maxlength: 200, placeholder: 'e.g. bcast on 4 ranks' });
  const backend = h('select', { id: 'new-backend' }, h('option', { value: 'local' }, 'local'));
  const comm = h('input', { id: 'new-comm', type: 'text', value: '4', inputmode: 'numeric', 'aria-describedby': 'new-comm-help', pattern: '\\s*\\d+(\\s*,\\s*\\d+)*\\s*' });
  const nodes = h('input', { id: 'new-nodes', type: 'number', min: 1, value: 1 });
  const sizes = h('input', { id: 'new-sizes', type: 'text', value: '4:1M', 'aria-describedby': 'new-sizes-help' });
  const strategy = h('select', { id: 'new-strategy' }, STRATEGIES.map((s) => h('option', { value: s }, s)));
  const budget = h('input', { id: 'new-budget', type: 'number', min: 0, value: 24, 'aria-describedby': 'new-budget-help' });
  const repeats = h('input', { id: 'new-repeats', type: 'number', min: 1, max: 100, value: 1 });
  const batch = h('input', { id: 'new-batch', type: 'number', min: 1, max: 1000, value: 8 });
  const seed = h('input', { id: 'new-seed', type: 'number', min: 0, value: 1 });
  const iterations = h('input', { id: 'new-iterations', type: 'number', min: 1, value: 100 });
  const warmup = h('input', { id: 'new-warmup', type: 'number', min: 0, value: 10 });
  const collectiveBoxes = COLLECTIVES.map((c) =>
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'collective', value: c, checked: c === 'bcast' }), c),
  );
  const json = h('textarea', { id: 'new-json', rows: 12, spellcheck: false, 'aria-describedby': 'new-json-help' });
  const status = h('p', { class: 'form-status', role: 'status', 'aria-live': 'polite' });
  let edited = false;

  void api.version().then((v) => {
    backend.replaceChildren(...v.backends.map((b) => h('option', { value: b.name }, b.name)));
    sync();
  }).catch(() => undefined);

  const spec = (): CampaignSpec => {
    const commSizes = comm.value.split(',').map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0);
    const collectives = collectiveBoxes.map((l) => l.querySelector('input')!).filter((i) => i.checked).map((i) => i.value);
    const out: CampaignSpec = {
      backend: backend.value,
      contexts: collectives.flatMap((collective) => commSizes.map((p) => ({ collective, comm_size: p, nodes: Number(nodes.value) || 1 }))),
      sizes: sizes.value.trim(),
      strategy: strategy.value,
      budget: Number(budget.value) || 0,
      repeats: Number(repeats.value) || 1,
      batch_size: Number(batch.value) || 8,
      seed: Number(seed.value) || 0,
      iterations: Number(iterations.value) || 100,
      warmup: Number(warmup.value) || 0,
    };
    if (name.value.trim()) out.name = name.value.trim();
    return out;
  };
  const sync = () => {
    if (!edited) json.value = JSON.stringify(spec(), null, 2);
  };
  json.addEventListener('input', () => {
    edited = true;
    reset.hidden = false;
  });
  const reset = h('button', {
    type: 'button',
    class: 'link',
    hidden: true,
    onclick: () => {
      edited = false;
      reset.hidden = true;
      sync();
    },
  }, 'Rebuild the JSON from the form');

  const submit = h('button', { type: 'submit', 'data-testid': 'create-submit' }, 'Create campaign');
  const form = h(
    'form',
    {
      class: 'create-form',
      'data-testid': 'create-form',
      oninput: (e: Event) => {
        if (e.target !== json) sync();
      },
      onchange: (e: Event) => {
        if (e.target !== json) sync();
      },
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          JSON.parse(json.value);
        } catch (err) {
          status.textContent = `The JSON is not valid: ${(err as Error).message}`;
          status.className = 'form-status error';
          return;
        }
        submit.disabled = true;
        status.className = 'form-status';
        status.textContent = 'Creating…';
        try {
          const created = await api.create(json.value);
          status.textContent = `Created campaign ${created.id} (${created.state}).`;
          onCreated(created);
        } catch (err) {
          status.className = 'form-status error';
          status.textContent = (err as Error).message;
        } finally {
          submit.disabled = false;
        }
      },
    },
    h(
      'div',
      { class: 'grid' },
      field('new-name', 'Name', name),
      field('new-backend', 'Backend', backend),
      field('new-strategy', 'Strategy', strategy),
      field('new-comm', 'Communicator sizes', comm, 'Comma separated, e.g. 4,8'),
      field('new-nodes', 'Nodes', nodes),
      field('new-sizes', 'Message sizes', sizes, 'MIN:MAX, e.g. 4:1M'),
      field('new-budget', 'Budget', budget, 'Evaluations per context; 0 = strategy default'),
      field('new-repeats', 'Repeats', repeats),
      field('new-batch', 'Batch size', batch),
      field('new-seed', 'Seed', seed),
      field('new-iterations', 'OSU iterations', iterations),
      field('new-warmup', 'OSU warm-up', warmup),
    ),
    h('fieldset', { class: 'collectives' }, h('legend', null, 'Collectives'), collectiveBoxes),
    h(
      'div',
      { class: 'field' },
      h('label', { for: 'new-json' }, 'Campaign spec (JSON)'),
      json,
      h('small', { id: 'new-json-help' }, 'Exactly what is sent to POST /api/v1/campaigns; edit it for fields the form lacks. ', reset),
    ),
    h('div', { class: 'form-actions' }, submit, status),
  );
  sync();
  return h('details', { class: 'card create', 'data-testid': 'create-details' }, h('summary', null, h('h2', null, 'New campaign')), form);
}
