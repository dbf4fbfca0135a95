// The campaign's rules file: preview, validation and verification results, download, and
// deploy (admins, when the daemon has a rules_dir).
import { api, type Campaign, type RulesVersion, type VersionInfo } from '../api';
import { h } from '../dom';
import * as fmt from '../format';
import { isAdmin } from '../session';

type Json = Record<string, unknown>;

function asObject(v: unknown): Json | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

// A one-line verdict of a validation or verification result, whatever its exact shape: the
// fields the daemon is known to use first, then the JSON itself.
function verdict(v: unknown, kind: 'validation' | 'verification'): { ok: boolean | null; text: string } {
  const o = asObject(v);
  if (!o || Object.keys(o).length === 0) return { ok: null, text: kind === 'verification' ? 'not verified' : 'not validated' };
  let ok: boolean | null = null;
  if (o.skipped === true) return { ok: null, text: typeof o.reason === 'string' ? o.reason : 'verification skipped' };
  for (const key of ['deployable', 'verified', 'passed', 'ok', 'all_match', 'loads']) {
    if (typeof o[key] === 'boolean') {
      ok = o[key] as boolean;
      break;
    }
  }
  if (ok === null && typeof o.status === 'string') ok = ['ok', 'passed', 'match', 'verified'].includes(o.status);
  let text = '';
  for (const key of ['verdict', 'summary', 'message', 'status', 'skipped', 'reason']) {
    if (typeof o[key] === 'string' && o[key]) {
      text = o[key] as string;
      break;
    }
  }
  if (Array.isArray(o.contexts)) {
    // Verification: per context, how many message sizes ran what the file says.
    text ||= o.contexts
      .map((c) => {
        const x = asObject(c) ?? {};
        return `${x.collective} P=${x.comm_size}: ${x.matches}/${x.sizes} sizes ran what the file says${x.run_ok === false ? ' (verification run failed)' : ''}`;
      })
      .join('; ');
  }
  if (!text) text = ok === null ? 'see details' : ok ? 'passed' : 'failed';
  return { ok, text };
}

function resultBlock(title: string, v: unknown, kind: 'validation' | 'verification'): HTMLElement {
  const r = verdict(v, kind);
  const findings = asObject(v)?.findings;
  return h(
    'div',
    { class: 'rules-check', 'data-field': kind, 'data-ok': r.ok === null ? '' : String(r.ok) },
    h('h3', null, title, ' ', h('span', { class: `badge ${r.ok === null ? '' : r.ok ? 'ok' : 'bad'}` }, r.ok === null ? 'n/a' : r.ok ? 'passed' : 'failed')),
    h('p', null, r.text),
    Array.isArray(findings) && findings.length
      ? h('ul', null, findings.slice(0, 20).map((f) => {
          const x = asObject(f) ?? {};
          return h('li', null, `${x.line ? `line ${x.line}: ` : ''}${x.severity ?? ''} ${x.code ? `[${x.code}] ` : ''}${x.message ?? JSON.stringify(f)}`);
        }))
      : null,
    v !== null && v !== undefined ? h('details', null, h('summary', null, 'Details (JSON)'), h('pre', { class: 'json' }, JSON.stringify(v, null, 2))) : null,
  );
}

export function rulesSection(campaign: Campaign, rules: RulesVersion | null, version: VersionInfo | null, after: () => void): HTMLElement {
  if (!rules) {
    return h('p', { class: 'empty', 'data-testid': 'rules-none' }, campaign.state === 'done' ? 'This campaign produced no rules file.' : 'The rules file is written when the campaign is done.');
  }
  const content = rules.content ?? '';
  const download = h('button', {
    type: 'button',
    'data-testid': 'rules-download',
    onclick: () => {
      const url = URL.createObjectURL(new Blob([content], { type: 'text/plain' }));
      const a = h('a', { href: url, download: `colltune-campaign-${campaign.id}-rules-v${rules.id}.${rules.format === 'json' ? 'json' : 'conf'}` });
      document.body.appendChild(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 1000);
    },
  }, 'Download');
  const validation = asObject(rules.validation);
  const deployable = validation?.deployable !== false;
  // Safe to deploy = verified on the real Open MPI (the verification record's `deployable`);
  // anything else needs an explicit, recorded force.
  const verification = asObject(rules.verification);
  const verified = verification?.deployable === true;
  const notVerifiedReason =
    typeof verification?.reason === 'string' && verification.reason ? verification.reason : 'not verified on the real Open MPI';
  let deploy: HTMLElement | null = null;
  if (isAdmin()) {
    const name = h('input', { id: 'deploy-name', type: 'text', value: 'colltune-rules.conf', pattern: '[A-Za-z0-9_][A-Za-z0-9._-]*', maxlength: 100 });
    const status = h('p', { role: 'status', 'aria-live': 'polite', class: 'form-status' });
    const noDir = version !== null && !version.rules_dir;
    const force = h('input', { id: 'deploy-force', type: 'checkbox' }) as HTMLInputElement;
    const button = h('button', { type: 'submit', disabled: !deployable || noDir }, 'Deploy');
    deploy = h(
      'form',
      {
        class: 'deploy',
        onsubmit: async (e: Event) => {
          e.preventDefault();
          if (!window.confirm(`Deploy rules version ${rules.id} as ${name.value} in ${version?.rules_dir ?? 'the rules folder'}?`)) return;
          button.disabled = true;
          try {
            const r = await api.deploy(rules.id, name.value.trim(), !verified && force.checked);
            status.className = 'form-status';
            status.textContent = `Deployed to ${r.deployment.target} (version ${r.deployment.version})${r.forced ? ` (forced: ${r.forced})` : ''}.`;
            after();
          } catch (err) {
            status.className = 'form-status error';
            status.textContent = (err as Error).message;
          } finally {
            button.disabled = false;
          }
        },
      },
      h('label', { for: 'deploy-name' }, `Deploy as (in ${version?.rules_dir ?? 'rules_dir'}) `),
      name,
      button,
      !deployable ? h('small', null, ' Not deployable: validation failed.') : null,
      deployable && !verified
        ? h('span', { class: 'deploy-force', 'data-field': 'not-verified' },
            h('small', null, ` Not verified: ${notVerifiedReason}. `),
            force,
            h('label', { for: 'deploy-force' }, ' deploy anyway (recorded as forced)'))
        : null,
      noDir ? h('small', null, ' The daemon has no rules_dir configured.') : null,
      status,
    );
  }
  const lines = content.split('\n');
  return h(
    'div',
    { class: 'rules', 'data-testid': 'rules' },
    h(
      'dl',
      { class: 'facts' },
      h('dt', null, 'Version'), h('dd', { 'data-field': 'rules-id' }, `#${rules.id}`),
      h('dt', null, 'Format'), h('dd', null, rules.format),
      h('dt', null, 'Size'), h('dd', null, `${rules.bytes} bytes, ${lines.length} lines`),
      h('dt', null, 'Created'), h('dd', null, fmt.time(rules.created_at)),
      h('dt', null, 'Deployed to'), h('dd', { 'data-field': 'deployed-to' }, rules.deployed_to || 'not deployed'),
    ),
    h('div', { class: 'rules-checks' }, resultBlock('Validation', rules.validation, 'validation'), resultBlock('Verification', rules.verification, 'verification')),
    h('div', { class: 'actions' }, download),
    deploy,
    h('h3', null, 'Preview'),
    h('pre', { class: 'rules-preview', tabindex: 0, 'aria-label': 'Rules file content', 'data-testid': 'rules-preview' }, content),
  );
}
