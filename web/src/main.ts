// The dashboard: hash routes (#/ campaigns, #/campaigns/<id> one campaign), the token form, the
// live event stream with its connection state, and the page being shown.
import './style.css';
import { h, replaceContent } from './dom';
import { EventStream, type StreamState } from './event_stream';
import { ingest } from './live';
import { campaignPage } from './pages/campaign';
import { campaignsPage } from './pages/campaigns';
import { showNotice } from './notice';
import type { Page } from './page';
import { establish, forget, session, signIn } from './session';

const main = document.getElementById('main')!;
const sessionBox = document.getElementById('session')!;
const connectionBox = document.getElementById('connection')!;

let page: Page | null = null;
let retryTicker: number | undefined;

function renderConnection(state: StreamState): void {
  window.clearInterval(retryTicker);
  connectionBox.dataset.state = state.kind;
  const draw = () => {
    if (state.kind === 'live') replaceContent(connectionBox, h('span', { class: 'dot live' }), 'Live');
    else if (state.kind === 'connecting') replaceContent(connectionBox, h('span', { class: 'dot' }), 'Connecting…');
    else {
      const seconds = Math.max(0, Math.ceil((state.retryAt - Date.now()) / 1000));
      replaceContent(
        connectionBox,
        h('span', { class: 'dot down' }),
        h('strong', null, 'Disconnected'),
        ` — retrying in ${seconds} s`,
        h('span', { class: 'reason' }, ` (${state.reason})`),
      );
    }
  };
  draw();
  if (state.kind === 'retrying') retryTicker = window.setInterval(draw, 1000);
}

const stream = new EventStream(ingest, renderConnection, () => page?.refresh());

function renderSession(): void {
  if (session.role === 'admin' || session.role === 'viewer') {
    replaceContent(
      sessionBox,
      h('span', { class: `role role-${session.role}`, 'data-testid': 'role' }, session.role),
      h('button', { type: 'button', class: 'link', onclick: () => void signOut() }, 'Sign out'),
    );
    return;
  }
  const input = h('input', {
    id: 'token-input',
    type: 'password',
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'API token',
    required: true,
    'aria-describedby': 'token-help',
  });
  const form = h(
    'form',
    {
      class: 'token-form',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        await signIn(input.value);
        await afterSessionChange();
      },
    },
    h('label', { for: 'token-input' }, session.role === 'anonymous' ? 'Token (optional)' : 'API token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    h('span', { id: 'token-help', class: 'sr-only' }, 'Kept for this browser tab only (sessionStorage).'),
  );
  replaceContent(sessionBox, session.role === 'anonymous' ? h('span', { class: 'role' }, 'anonymous, read-only') : null, form);
}

async function afterSessionChange(): Promise<void> {
  renderSession();
  if (session.role === null) {
    showNotice(session.error ?? 'Enter an API token (admin or viewer) to see campaigns.', session.error ? 'error' : 'info');
    stream.stop();
    renderConnection({ kind: 'connecting' });
    main.replaceChildren(h('p', { class: 'empty' }, 'Sign in with a token to continue.'));
    page?.dispose();
    page = null;
    document.getElementById('token-input')?.focus();
    return;
  }
  showNotice(null);
  stream.restart();
  route();
}

async function signOut(): Promise<void> {
  forget();
  await establish();
  await afterSessionChange();
}

function route(): void {
  if (session.role === null) return;
  page?.dispose();
  const match = /^#\/campaigns\/(\d+)$/.exec(location.hash);
  page = match ? campaignPage(Number(match[1])) : campaignsPage();
  main.replaceChildren(page.root);
}

window.addEventListener('hashchange', () => {
  route();
  main.focus({ preventScroll: true });
});

void (async () => {
  renderConnection({ kind: 'connecting' });
  await establish();
  await afterSessionChange();
})();
