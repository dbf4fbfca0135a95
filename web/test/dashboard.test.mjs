// The dashboard in a real browser against the real daemon: sign-in and roles, a campaign
// created from the form appearing and progressing live, the numbers shown equal to the API's,
// charts drawn with data, viewer tokens without mutating controls (and refused by the API),
// pause/resume/cancel, and the "disconnected, retrying" state across a daemon restart.
// Screenshots of both pages go to $WEB_ARTIFACTS (and to web/docs/ with WEB_UPDATE_DOCS=1).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './browser.mjs';
import { ADMIN_TOKEN, Daemon, VIEWER_TOKEN } from './daemon.mjs';

const binary = process.env.COLLTUNE_BIN;
const artifacts = process.env.WEB_ARTIFACTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'web-artifacts-'));
const webRoot = process.env.WEB_DIST ?? path.resolve(import.meta.dirname, '../dist');
const docsDir = path.resolve(import.meta.dirname, '../docs');

// The sim backend runs no MPI; `pace` makes each run take (pace x its simulated benchmark time)
// of real time, so progress is visible for a few seconds.
const BACKENDS = { sim: { max_concurrent_jobs: 2, pace: 0.03, seed: 7 } };

// A campaign's spec as the form below fills it in.
const FORM_CAMPAIGN = {
  name: 'bcast on the simulated cluster',
  backend: 'sim',
  contexts: [
    { collective: 'bcast', comm_size: 8, nodes: 1 },
    { collective: 'bcast', comm_size: 16, nodes: 1 },
  ],
  sizes: '4:1M',
  strategy: 'bo',
  budget: 20,
  repeats: 1,
  batch_size: 4,
  seed: 3,
  iterations: 100,
  warmup: 10,
};

let daemon;
let browser;
let workDir;
const problems = []; // page errors and unexpected console errors, from every page

function watch(page, name) {
  page.on('pageerror', (e) => problems.push(`${name}: page error: ${e.message}`));
  page.on('console', (m) => {
    // Refused calls (401 before sign-in, 400/403 of the role probe, 404 of a rules file not
    // written yet, refused connections while the daemon is down) are logged by Chromium itself.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`${name}: console: ${m.text()}`);
  });
  page.on('dialog', (d) => void d.accept());
}

async function signIn(page, token, role) {
  await page.goto(daemon.url + '/');
  await page.locator('#token-input').fill(token);
  await page.locator('.token-form button[type=submit]').click();
  await page.locator('[data-testid=role]').filter({ hasText: role }).waitFor();
}

async function waitFor(what, fn, timeoutMs = 60_000, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function jobsDone(id) {
  const jobs = await daemon.api(`/api/v1/campaigns/${id}/jobs?limit=1000`);
  return jobs.json.items.filter((j) => j.state === 'done').length;
}

function formatUs(v) {
  if (v >= 1000) return `${(v / 1000).toFixed(v >= 10000 ? 1 : 2)} ms`;
  return `${v.toFixed(v >= 100 ? 1 : 2)} µs`;
}

// Pixels of a canvas that are not blank: proof that something was drawn.
async function inkedPixels(locator) {
  return locator.evaluate((canvas) => {
    const ctx = canvas.getContext('2d');
    const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0 && (data[i] < 240 || data[i + 1] < 240 || data[i + 2] < 240)) n++;
    return n;
  });
}

// The whole page into the artifacts; with WEB_UPDATE_DOCS=1 also its top `docsHeight` pixels
// into web/docs/ (kept small for the README).
async function screenshot(page, name, docsHeight) {
  const file = path.join(artifacts, name);
  await page.screenshot({ path: file, fullPage: true });
  if (process.env.WEB_UPDATE_DOCS === '1') {
    fs.mkdirSync(docsDir, { recursive: true });
    const width = page.viewportSize().width;
    const height = Math.min(docsHeight, await page.evaluate(() => document.documentElement.scrollHeight));
    await page.screenshot({ path: path.join(docsDir, name), fullPage: true, clip: { x: 0, y: 0, width, height } });
  }
  return file;
}

describe('web dashboard in headless Chromium', { timeout: 300_000 }, () => {
  let admin; // the admin's page, open across the tests
  let formCampaign; // id
  let exhaustive; // id

  before(async () => {
    assert.ok(binary, 'COLLTUNE_BIN must name the colltune binary');
    fs.mkdirSync(artifacts, { recursive: true });
    assert.ok(fs.existsSync(path.join(webRoot, 'index.html')), `${webRoot} has no index.html: run web/build.sh`);
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'colltune-web-test-'));
    daemon = new Daemon({ binary, workDir, webRoot, backends: BACKENDS });
    await daemon.start();
    browser = await launchBrowser();
  });

  after(async () => {
    try {
      await browser?.close();
      await daemon?.stop();
      if (daemon && fs.existsSync(daemon.logPath)) fs.copyFileSync(daemon.logPath, path.join(artifacts, 'daemon.log'));
    } finally {
      if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('serves the dashboard at / next to the API', async () => {
    const index = await fetch(daemon.url + '/');
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type'), /text\/html/);
    const html = await index.text();
    const script = /<script type="module" src="\.\/(assets\/[^"]+\.js)"/.exec(html);
    assert.ok(script, 'index.html loads a bundled script');
    assert.doesNotMatch(html, /https?:\/\//, 'nothing is loaded from another origin');
    const js = await fetch(`${daemon.url}/${script[1]}`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type'), /javascript/);
    const unknown = await daemon.api('/api/v1/no-such-route');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, 'not_found');
  });

  it('asks for a token, then shows the admin role and a live connection', async () => {
    admin = await browser.context.newPage();
    watch(admin, 'admin');
    await admin.goto(daemon.url + '/');
    await admin.locator('#token-input').waitFor();
    assert.equal(await admin.locator('[data-testid=campaigns-table]').count(), 0, 'nothing shown before sign-in');
    await signIn(admin, ADMIN_TOKEN, 'admin');
    await admin.getByText('No campaigns yet.').waitFor();
    await admin.locator('#connection[data-state=live]').waitFor();
    assert.equal(await admin.evaluate(() => sessionStorage.getItem('colltune.token')), ADMIN_TOKEN);
  });

  it('shows a campaign created through the API without a reload', async () => {
    await admin.evaluate(() => (window.__sameDocument = true));
    // Exhaustive over the same contexts: its optimum becomes the reference line of the next
    // campaign's convergence charts. It runs while the next tests go on.
    const created = await daemon.api('/api/v1/campaigns', {
      method: 'POST',
      // Fewer OSU iterations: the same latencies in a tenth of the (paced) time.
      body: { ...FORM_CAMPAIGN, name: 'exhaustive reference', strategy: 'exhaustive', budget: 0, batch_size: 64, iterations: 10, warmup: 1 },
    });
    assert.equal(created.status, 201, created.text);
    exhaustive = created.json.id;
    const row = admin.locator(`[data-testid=campaign-row-${exhaustive}]`);
    await row.waitFor({ timeout: 10_000 });
    assert.equal(await row.locator('[data-field=name]').innerText(), 'exhaustive reference');
    assert.equal(await admin.evaluate(() => window.__sameDocument), true, 'no page reload happened');
  });

  it('creates a campaign from the form; it appears and progresses live without a reload', async (t) => {
    await admin.evaluate(() => (window.__sameDocument = true));
    await admin.locator('[data-testid=create-details] summary').click();
    await admin.locator('#new-name').fill(FORM_CAMPAIGN.name);
    await admin.locator('#new-backend').selectOption('sim');
    await admin.locator('#new-strategy').selectOption('bo');
    await admin.locator('#new-comm').fill('8, 16');
    await admin.locator('#new-sizes').fill('4:1M');
    await admin.locator('#new-budget').fill('20');
    await admin.locator('#new-batch').fill('4');
    await admin.locator('#new-seed').fill('3');
    // The API's refusal reaches the user.
    await admin.locator('#new-sizes').fill('lots');
    await admin.locator('[data-testid=create-submit]').click();
    await admin.locator('.create-form .form-status.error').filter({ hasText: /invalid campaign spec: sizes/ }).waitFor();
    await admin.locator('#new-sizes').fill('4:1M');
    const posted = JSON.parse(await admin.locator('#new-json').inputValue());
    assert.deepEqual(posted, FORM_CAMPAIGN, 'the form builds the spec the API takes');
    await admin.locator('[data-testid=create-submit]').click();
    const status = await waitFor('the created message', async () => /Created campaign (\d+)/.exec(await admin.locator('.create-form .form-status').innerText()));
    formCampaign = Number(status[1]);
    const row = admin.locator(`[data-testid=campaign-row-${formCampaign}]`);
    await row.waitFor();
    const api = await daemon.api(`/api/v1/campaigns/${formCampaign}`);
    assert.equal(api.json.name, FORM_CAMPAIGN.name);
    for (const key of ['backend', 'strategy', 'budget', 'batch_size', 'seed', 'contexts'])
      assert.deepEqual(api.json.spec[key], key === 'contexts' ? FORM_CAMPAIGN.contexts.map((c) => ({ ...c, ppn: 0 })) : FORM_CAMPAIGN[key]);

    // Jobs done as the row shows them, sampled until the campaign is done.
    const seen = new Set();
    await waitFor('the campaign to finish', async () => {
      const done = await row.locator('[data-field=jobs]').getAttribute('data-done');
      if (done !== null) seen.add(Number(done));
      return (await row.locator('[data-field=state] .badge').getAttribute('data-state')) === 'done';
    }, 120_000, 100);
    t.diagnostic(`jobs done as shown while running: ${[...seen].join(', ')}`);
    assert.ok(seen.size >= 3, `progress moved live (saw jobs done ${[...seen].join(', ')})`);
    assert.equal(await admin.evaluate(() => window.__sameDocument), true, 'no page reload happened');
  });

  it('shows on the campaigns page the numbers the API reports', async () => {
    await waitFor('the exhaustive campaign to finish', async () => (await daemon.api(`/api/v1/campaigns/${exhaustive}`)).json.state === 'done', 180_000, 500);
    await admin.locator(`[data-testid=campaign-row-${exhaustive}] [data-field=state] [data-state=done]`).waitFor();

    for (const id of [formCampaign, exhaustive]) {
      const r = admin.locator(`[data-testid=campaign-row-${id}]`);
      const campaign = (await daemon.api(`/api/v1/campaigns/${id}`)).json;
      const report = (await daemon.api(`/api/v1/campaigns/${id}/report`)).json;
      await waitFor(`row ${id} to show its final jobs count`, async () => Number(await r.locator('[data-field=jobs]').getAttribute('data-done')) === (await jobsDone(id)));
      assert.equal(await r.locator('[data-field=name]').innerText(), campaign.name);
      assert.equal(await r.locator('[data-field=backend]').innerText(), 'sim');
      const best = Math.max(...report.results.map((x) => x.speedup ?? 0));
      assert.ok(best > 0, 'the report has speed-ups');
      await waitFor(`row ${id} to show the final speed-up`, async () => (await r.locator('[data-field=best-speedup]').innerText()) === `${best.toFixed(2)}×`, 10_000);
    }
    await screenshot(admin, 'campaigns.png', 900);
  });

  it('shows on the campaign page charts with data and the numbers the API reports', async () => {
    await admin.locator(`[data-testid=campaign-row-${formCampaign}] a[data-field=name]`).click();
    const root = admin.locator('.campaign-page[data-loaded=true]');
    await root.waitFor();
    const id = formCampaign;
    const [report, convergence, jobs, rules] = await Promise.all(
      ['report', 'convergence', 'jobs?limit=1000', 'rules'].map(async (p) => (await daemon.api(`/api/v1/campaigns/${id}/${p}`)).json),
    );

    // Results: one table row and one map cell per (collective, comm size, message size).
    const rows = root.locator('[data-testid=results-table] tbody tr');
    assert.equal(await rows.count(), report.results.length);
    for (const r of report.results) {
      const tr = root.locator(`[data-testid=results-table] tr[data-comm-size="${r.comm_size}"][data-msg-size="${r.msg_size}"]`);
      assert.equal(Number(await tr.locator('[data-field=best-us]').getAttribute('data-value')), r.best_us);
      assert.equal(await tr.locator('[data-field=best-us]').textContent(), formatUs(r.best_us));
      const speedupText = r.speedup === null ? '–' : `${r.speedup.toFixed(2)}×`;
      assert.equal(await tr.locator('[data-field=speedup]').textContent(), speedupText + (r.tie ? ' ~' : '') + (r.reverted ? ' R' : ''));
      const interval = typeof r.speedup_low === 'number' && typeof r.speedup_high === 'number' ? `${r.speedup_low.toFixed(2)}–${r.speedup_high.toFixed(2)}×` : '–';
      assert.equal(await tr.locator('[data-field=interval]').textContent(), interval);
      assert.equal(await tr.locator('[data-field=pairs]').textContent(), String(r.pairs ?? 0));
      assert.equal(Number(await tr.locator('[data-field=chosen]').getAttribute('data-algorithm')), r.best.algorithm);
      const cell = root.locator(`[data-testid=result-map] rect[data-comm-size="${r.comm_size}"][data-msg-size="${r.msg_size}"]`);
      assert.equal(Number(await cell.getAttribute('data-algorithm')), r.best.algorithm);
      assert.match(await cell.locator('title').textContent(), new RegExp(r.best_name));
    }

    // Convergence: one chart per context, as many points as evaluations, drawn.
    for (const ctx of convergence.contexts) {
      const figure = root.locator(`[data-testid=convergence-${ctx.context_id}]`);
      assert.equal(Number(await figure.getAttribute('data-points')), ctx.evaluations.length);
      assert.ok((await inkedPixels(figure.locator('canvas'))) > 1000, `convergence chart ${ctx.context_id} is drawn`);
      // The exhaustive campaign's optimum is drawn as a reference line.
      assert.match(await figure.locator('.u-legend').innerText(), /exhaustive optimum/);
    }
    const speedup = root.locator('[data-testid=speedup-bcast]');
    assert.ok((await inkedPixels(speedup.locator('canvas'))) > 1000, 'speed-up chart is drawn');

    // Jobs, cost, rules.
    assert.equal(await root.locator('[data-testid=jobs-table] tbody tr').count(), Math.min(200, jobs.total));
    for (const j of jobs.items.slice(0, 5)) {
      const tr = root.locator(`[data-testid=jobs-table] tr[data-job-id="${j.id}"]`);
      assert.equal(await tr.locator('[data-field=job-state]').innerText(), j.state);
      assert.equal(await tr.locator('[data-field=backend-job-id]').innerText(), j.backend_job_id || '–');
    }
    assert.equal(await root.locator('[data-field=cost-jobs]').innerText(), String(report.cost.jobs));
    assert.equal(await root.locator('[data-field=cost-runs]').innerText(), String(report.cost.runs));
    // Where the node time went, the search apart from the final phase.
    assert.ok(report.cost.by_purpose.search && report.cost.by_purpose.final, JSON.stringify(report.cost));
    assert.match(await root.locator('[data-field=cost-by-purpose]').innerText(), /^search .+ · final phase /);
    assert.equal(await root.locator('[data-testid=rules-preview]').textContent(), rules.content);
    assert.equal(await root.locator('[data-field=validation]').getAttribute('data-ok'), String(rules.validation.deployable));
    // A sim campaign's file is not verified on the real Open MPI: the deploy form says why and
    // offers only an explicit, recorded force.
    assert.equal(rules.verification.deployable, false, 'a sim campaign is not deployable unforced');
    const note = root.locator('form.deploy [data-field=not-verified]');
    assert.ok((await note.innerText()).includes(`Not verified: ${rules.verification.reason}`), await note.innerText());
    assert.equal(await note.locator('input#deploy-force').isChecked(), false);
    assert.equal(await root.locator('[data-field=runs]').innerText(), String((await daemon.api(`/api/v1/campaigns/${id}`)).json.progress.runs));
    await screenshot(admin, 'campaign.png', 1450);
  });

  it('shows a whole-cluster campaign\'s predicted cells apart from the measured ones', async () => {
    // Issue #15: bcast measured at 2, 4 and 8 ranks; 3, 5, 6 and 7 predicted.
    const created = await daemon.api('/api/v1/campaigns', {
      method: 'POST',
      body: {
        name: 'whole cluster', backend: 'sim', sizes: '4:4K', budget: 4, batch_size: 4, iterations: 10, warmup: 1, final_repeats: 2,
        contexts: [2, 4, 8].map((p) => ({ collective: 'bcast', comm_size: p })),
        cluster: { strategy: 'nearest', min_confidence: 0.8 },
      },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.json.id;
    await waitFor('the whole-cluster campaign to finish', async () => (await daemon.api(`/api/v1/campaigns/${id}`)).json.state === 'done', 180_000, 500);
    const report = (await daemon.api(`/api/v1/campaigns/${id}/report`)).json;
    assert.deepEqual([...new Set(report.predicted.map((r) => r.comm_size))].sort(), [3, 5, 6, 7]);
    await admin.evaluate((cid) => (location.hash = `#/campaigns/${cid}`), id);
    const map = admin.locator('.campaign-page[data-loaded=true] [data-testid=result-map]');
    await map.waitFor();
    await waitFor('the map to draw every cell', async () => (await map.locator('rect').count()) === report.results.length + report.predicted.length, 20_000);
    assert.equal(await map.locator('rect[data-source=measured]').count(), report.results.length);
    assert.equal(await map.locator('rect[data-source=predicted]').count(), report.predicted.length);
    for (const r of report.predicted.slice(0, 8)) {
      const cell = map.locator(`rect[data-comm-size="${r.comm_size}"][data-msg-size="${r.msg_size}"]`);
      assert.equal(await cell.getAttribute('class'), 'cell predicted');
      assert.equal(Number(await cell.getAttribute('data-algorithm')), r.best.algorithm);
      const title = await cell.locator('title').textContent();
      assert.match(title, new RegExp(`PREDICTED[\\s\\S]*confidence that it beats the default: ${r.confidence.toFixed(2)}`));
      // The layout the block was tuned for: the size's own layout and the measured size behind it.
      // (One node here: the sim's campaign has no node layout, so all P ranks are on one.)
      assert.equal(r.layout.nodes, 1);
      assert.ok(title.includes(`layout: 1 node x ${r.comm_size} ranks per node (tuned as P=${r.layout_from} was run)`), title);
    }
    assert.ok((await map.locator('[data-field=predicted-note]').count()) > 0);
    await screenshot(admin, 'whole-cluster.png', 900);
  });

  it('gives a viewer no mutating controls, and the API refuses them', async () => {
    const viewer = await browser.context.newPage();
    watch(viewer, 'viewer');
    // A running campaign, so that pause and cancel would apply.
    const created = await daemon.api('/api/v1/campaigns', { method: 'POST', body: { ...FORM_CAMPAIGN, name: 'long one', strategy: 'random', budget: 100, repeats: 10 } });
    assert.equal(created.status, 201);
    const id = created.json.id;
    await signIn(viewer, VIEWER_TOKEN, 'viewer');
    await viewer.locator(`[data-testid=campaign-row-${id}]`).waitFor();
    await viewer.locator('[data-testid=read-only-note]').waitFor();
    assert.equal(await viewer.locator('[data-testid=create-form]').count(), 0);
    assert.equal(await viewer.locator('button[data-action]').count(), 0);
    await viewer.goto(`${daemon.url}/#/campaigns/${id}`);
    await viewer.locator('.campaign-page[data-loaded=true]').waitFor();
    assert.equal(await viewer.locator('button[data-action]').count(), 0);
    assert.equal(await viewer.locator('form.deploy').count(), 0);
    const refused = await viewer.evaluate(async ([cid, token]) => {
      const r = await fetch(`/api/v1/campaigns/${cid}/cancel`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
      return r.status;
    }, [id, VIEWER_TOKEN]);
    assert.equal(refused, 403);
    assert.notEqual((await daemon.api(`/api/v1/campaigns/${id}`)).json.state, 'cancelled');
    await viewer.close();

    // The admin pauses, resumes and cancels it from the campaigns page.
    await admin.goto(`${daemon.url}/#/`);
    const row = admin.locator(`[data-testid=campaign-row-${id}]`);
    await row.locator('button[data-action=pause]').click();
    await row.locator('[data-state=paused]').waitFor();
    assert.equal((await daemon.api(`/api/v1/campaigns/${id}`)).json.state, 'paused');
    await row.locator('button[data-action=resume]').click();
    await row.locator('button[data-action=pause]').waitFor();
    await row.locator('button[data-action=cancel]').click();
    await row.locator('[data-state=cancelled]').waitFor();
    assert.equal((await daemon.api(`/api/v1/campaigns/${id}`)).json.state, 'cancelled');
  });

  it('says "disconnected, retrying" while the daemon is down and goes live again', async () => {
    await daemon.stop();
    const connection = admin.locator('#connection[data-state=retrying]');
    await connection.waitFor({ timeout: 20_000 });
    assert.match(await connection.innerText(), /Disconnected.*retrying in \d+ s/s);
    await daemon.start();
    await admin.locator('#connection[data-state=live]').waitFor({ timeout: 30_000 });
    // Events flow again: a new campaign shows up by itself.
    const created = await daemon.api('/api/v1/campaigns', { method: 'POST', body: { ...FORM_CAMPAIGN, name: 'after restart', budget: 4 } });
    assert.equal(created.status, 201);
    await admin.locator(`[data-testid=campaign-row-${created.json.id}]`).waitFor({ timeout: 15_000 });
  });

  it('raised no script errors', () => {
    assert.deepEqual(problems, []);
  });
});
