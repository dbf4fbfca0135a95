// Pieces shared by the campaigns and campaign pages.
import { api, type Campaign } from '../api';
import { h } from '../dom';
import { showNotice } from '../notice';

export function stateBadge(c: Campaign): HTMLElement {
  const text = c.pending_action ? `${c.state} (${c.pending_action === 'pause' ? 'pausing' : 'cancelling'}…)` : c.state;
  return h('span', { class: `badge state-${c.state}`, title: c.error || undefined, 'data-state': c.state }, text);
}

// Pause / resume / cancel buttons for the campaign's current state (admins only: the caller
// decides whether to show them; the API refuses them for viewers anyway).
export function actionButtons(c: Campaign, after: () => void): HTMLElement {
  const act = async (action: 'pause' | 'resume' | 'cancel', button: HTMLButtonElement) => {
    if (action === 'cancel' && !window.confirm(`Cancel campaign ${c.id} “${c.name}”? Its unfinished jobs are cancelled.`)) return;
    button.disabled = true;
    try {
      await api.transition(c.id, action);
      showNotice(null);
    } catch (e) {
      showNotice(`Cannot ${action} campaign ${c.id}: ${(e as Error).message}`);
    } finally {
      button.disabled = false;
      after();
    }
  };
  const button = (action: 'pause' | 'resume' | 'cancel', label: string) => {
    const b: HTMLButtonElement = h('button', {
      type: 'button',
      class: action === 'cancel' ? 'danger small' : 'small',
      'data-action': action,
      'data-focus-key': `${action}-${c.id}`,
      'aria-label': `${label} campaign ${c.id}`,
      onclick: () => void act(action, b),
    }, label);
    return b;
  };
  const busy = c.pending_action !== null;
  return h(
    'div',
    { class: 'actions' },
    !busy && (c.state === 'queued' || c.state === 'running') ? button('pause', 'Pause') : null,
    !busy && (c.state === 'paused' || c.state === 'failed') ? button('resume', 'Resume') : null,
    c.state !== 'done' && c.state !== 'cancelled' && c.pending_action !== 'cancel' ? button('cancel', 'Cancel') : null,
  );
}
