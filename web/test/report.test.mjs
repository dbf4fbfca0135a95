// The latency-vs-size pictures in a real browser, from a real campaign: a sim campaign run by
// the daemon (its name hostile HTML), then
//  - `colltune report -o report.html` opened from disk in headless Chromium: nothing fetched,
//    no script run, the name shown as text, one sized SVG chart per context with finite paths,
//    the table's numbers equal to the API's report;
//  - the dashboard's campaign page: the same charts, the same numbers.
// Screenshots go to $WEB_ARTIFACTS (and to docs/images/ with WEB_UPDATE_DOCS=1).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { launchBrowser } from './browser.mjs';
import { ADMIN_TOKEN, Daemon } from './daemon.mjs';

const binary = process.env.COLLTUNE_BIN;
const artifacts = process.env.WEB_ARTIFACTS ?? fs.mkdtempSync(path.join(os.tmpdir(), 'web-artifacts-'));
const webRoot = process.env.WEB_DIST ?? path.resolve(import.meta.dirname, '../dist');
const docsImages = path.resolve(import.meta.dirname, '../../docs/images');

const NAME = '<script>window.__pwned = 1</script> bcast & "allreduce" <img src=x onerror="window.__pwned = 2">';
const CAMPAIGN = {
  name: NAME,
  backend: 'sim',
  contexts: [
    { collective: 'bcast', comm_size: 16, nodes: 1 },
    { collective: 'allreduce', comm_size: 8, nodes: 1 },
  ],
  sizes: '4:1M',
  strategy: 'bo',
  budget: 24,
  batch_size: 8,
  seed: 3,
};

// Every number of an SVG path's d attribute.
function pathNumbers(d) {
  return d
    .replace(/[MLZ]/g, ' ')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}

async function save(page, name, locator) {
  const file = path.join(artifacts, name);
  await (locator ?? page).screenshot({ path: file, ...(locator ? {} : { fullPage: true }) });
  if (process.env.WEB_UPDATE_DOCS === '1') {
    fs.mkdirSync(docsImages, { recursive: true });
    fs.copyFileSync(file, path.join(docsImages, name));
  }
}

// The charts inside `scope` (a page or locator): their count, sizes, path data and points.
async function chartFacts(scope) {
  return scope.locator('svg.latency-chart').evaluateAll((svgs) =>
    svgs.map((s) => {
      const box = s.getBoundingClientRect();
      return {
        width: box.width,
        height: box.height,
        lines: [...s.querySelectorAll('path[class*="line-"]')].map((p) => ({ d: p.getAttribute('d'), length: p.getTotalLength() })),
        bands: [...s.querySelectorAll('path[class*="band-"]')].map((p) => p.getAttribute('d')),
        points: [...s.querySelectorAll('circle[data-latency-us]')].map((c) => ({ cls: c.getAttribute('class'), size: Number(c.dataset.msgSize), us: Number(c.dataset.latencyUs) })),
        ranges: [...s.querySelectorAll('g.algo-range')].map((g) => ({ algorithm: Number(g.dataset.algorithm), from: Number(g.dataset.from), to: Number(g.dataset.to) })),
      };
    }),
  );
}

function checkCharts(charts, report) {
  const contexts = new Set(report.results.map((r) => `${r.collective}/${r.comm_size}`));
  assert.equal(charts.length, contexts.size, 'one chart per (collective, comm size)');
  for (const c of charts) {
    assert.ok(c.width > 300 && c.height > 120, `chart sized ${c.width}x${c.height}`);
    assert.ok(c.lines.length >= 2, 'default and tuned lines');
    for (const l of c.lines) {
      assert.ok(Number.isFinite(l.length) && l.length > 50, `a drawn line (${l.length} px)`);
      for (const v of pathNumbers(l.d)) assert.ok(Number.isFinite(v), `finite path data: ${l.d}`);
    }
    assert.ok(c.bands.length >= 1, 'bands drawn');
    for (const d of c.bands) for (const v of pathNumbers(d)) assert.ok(Number.isFinite(v), `finite band: ${d}`);
    assert.ok(c.ranges.length >= 1, 'the algorithm strip');
  }
  // Every point is a number of the report: the tuned median or the default's.
  const points = charts.flatMap((c) => c.points);
  for (const r of report.results) {
    const at = points.filter((p) => p.size === r.msg_size);
    assert.ok(at.some((p) => p.cls.includes('tuned') && Math.abs(p.us - r.best_us) <= 1e-6 * r.best_us), `tuned point at ${r.collective} ${r.msg_size}`);
    if (r.default_us !== null) assert.ok(at.some((p) => p.cls.includes('default') && Math.abs(p.us - r.default_us) <= 1e-6 * r.default_us), `default point at ${r.collective} ${r.msg_size}`);
  }
  // The strip covers every size with the algorithm the report chose there.
  for (const r of report.results) {
    const covering = charts.flatMap((c) => c.ranges).filter((g) => g.from <= r.msg_size && r.msg_size <= g.to && g.algorithm === r.best.algorithm);
    assert.ok(covering.length >= 1, `strip names algorithm ${r.best.algorithm} at ${r.msg_size}`);
  }
}

describe('latency pictures in headless Chromium', { timeout: 240_000 }, () => {
  let daemon;
  let browser;
  let workDir;
  let id;
  let report;

  before(async () => {
    assert.ok(binary, 'COLLTUNE_BIN must name the colltune binary');
    fs.mkdirSync(artifacts, { recursive: true });
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'colltune-report-test-'));
    daemon = new Daemon({ binary, workDir, webRoot, backends: { sim: { max_concurrent_jobs: 2, seed: 7 } } });
    await daemon.start();
    browser = await launchBrowser();
    const created = await daemon.api('/api/v1/campaigns', { method: 'POST', body: CAMPAIGN });
    assert.equal(created.status, 201, created.text);
    id = created.json.id;
    const deadline = Date.now() + 120_000;
    while ((await daemon.api(`/api/v1/campaigns/${id}`)).json.state !== 'done') {
      assert.ok(Date.now() < deadline, 'the sim campaign finishes');
      await new Promise((r) => setTimeout(r, 250));
    }
    // The report once the rules stage has written its file (the last step of a campaign).
    report = (await daemon.api(`/api/v1/campaigns/${id}/report`)).json;
  });

  after(async () => {
    try {
      await browser?.close();
      await daemon?.stop();
    } finally {
      if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
    }
  });

  it('opens the HTML report offline: nothing fetched, no script, charts with the report\'s numbers', async () => {
    const file = path.join(workDir, 'report.html');
    const r = spawnSync(binary, ['report', '--db', path.join(workDir, 'colltune.db'), '--campaign', String(id), '-o', file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const html = fs.readFileSync(file, 'utf8');
    assert.doesNotMatch(html, /<script|https?:|url\(|@import/i, 'self-contained');

    const page = await browser.context.newPage();
    const requests = [];
    page.on('request', (req) => requests.push(req.url()));
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForLoadState('load');
    assert.deepEqual(requests, [pathToFileURL(file).href], 'the page loads nothing but itself');
    assert.deepEqual(errors, []);
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'the campaign name ran no script');
    assert.equal(await page.evaluate(() => document.scripts.length + document.images.length), 0);
    assert.equal(await page.locator('h1[data-field=name]').textContent(), NAME);
    assert.equal(await page.title(), `colltune report: ${NAME} (#${id})`);

    checkCharts(await chartFacts(page), report);
    // The table: one row per result, its numbers those of the API's report.
    for (const x of report.results) {
      const tr = page.locator(`section[data-collective="${x.collective}"][data-comm-size="${x.comm_size}"] tr[data-msg-size="${x.msg_size}"]`);
      assert.equal(await tr.count(), 1);
      const attr = async (k) => tr.getAttribute(k);
      assert.ok(Math.abs(Number(await attr('data-best-us')) - x.best_us) <= 1e-9 * x.best_us);
      assert.ok(Math.abs(Number(await attr('data-speedup')) - x.speedup) <= 1e-9 * x.speedup);
      assert.equal(await attr('data-tie'), x.tie ? '1' : '0');
    }
    assert.equal(await page.locator('[data-field=jobs]').textContent(), String(report.cost.jobs));
    assert.equal(await page.locator('[data-field=runs]').textContent(), String(report.cost.runs));
    await page.setViewportSize({ width: 1100, height: 900 });
    await save(page, 'report.png');
    await page.close();
  });

  it('draws the same chart on the dashboard\'s campaign page', async () => {
    const page = await browser.context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(daemon.url + '/');
    await page.locator('#token-input').fill(ADMIN_TOKEN);
    await page.locator('.token-form button[type=submit]').click();
    await page.locator('[data-testid=role]').filter({ hasText: 'admin' }).waitFor();
    await page.goto(`${daemon.url}/#/campaigns/${id}`);
    await page.locator('.campaign-page[data-loaded=true]').waitFor();
    const section = page.locator('[data-testid=section-latency]');
    await section.locator('svg.latency-chart').first().waitFor();
    assert.equal(await page.evaluate(() => window.__pwned), undefined, 'the campaign name ran no script');
    checkCharts(await chartFacts(section), report);
    for (const x of report.results) {
      const figure = section.locator(`[data-testid="latency-${x.collective}-${x.comm_size}"]`);
      assert.equal(Number(await figure.getAttribute('data-points')), report.results.filter((r) => r.collective === x.collective && r.comm_size === x.comm_size).length);
    }
    assert.equal(await page.locator('[data-field=cost-jobs]').innerText(), String(report.cost.jobs));
    assert.deepEqual(errors, []);
    await section.scrollIntoViewIfNeeded();
    await save(page, 'dashboard-campaign.png', section);
    await page.close();
  });
});
