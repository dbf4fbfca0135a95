// Unit tests of the dashboard's pure modules (SSE parsing, progress and cost arithmetic),
// compiled from TypeScript on the fly with esbuild.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { build } from 'esbuild';

async function load(entry) {
  const out = await build({
    entryPoints: [path.resolve(import.meta.dirname, '../src', entry)],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
  });
  return import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`);
}

const { SseParser } = await load('sse.ts');
const progress = await load('progress.ts');
const resultMap = await load('charts/result_map.ts');

describe('SseParser', () => {
  it('parses the daemon\'s events across arbitrary chunk boundaries', () => {
    const text =
      'retry: 2000\n: colltune events\n\n' +
      'id: 7\nevent: job_done\ndata: {"type":"job_done","payload":{"job_id":3}}\n\n' +
      'event: run\ndata: {"type":"run"}\n\n';
    for (let cut = 1; cut < text.length; cut++) {
      const p = new SseParser();
      const events = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      assert.deepEqual(events, [
        { id: '7', event: 'job_done', data: '{"type":"job_done","payload":{"job_id":3}}' },
        { id: null, event: 'run', data: '{"type":"run"}' },
      ], `cut at ${cut}`);
      assert.equal(p.retryMs, 2000);
    }
  });

  it('handles CRLF and CR line ends, multi-line data and comments', () => {
    const p = new SseParser();
    assert.deepEqual(p.push('data: a\r\ndata: b\r'), []);
    assert.deepEqual(p.push('\n\r\n: keepalive\r\rdata:c\r\r'), [{ id: null, event: 'message', data: 'a\nb' }]);
    // A CR at the end of a chunk may be half of a CRLF: it ends its line once more arrives.
    assert.deepEqual(p.push(': next\n'), [{ id: null, event: 'message', data: 'c' }]);
  });

  it('dispatches nothing for comment-only blocks and ignores unknown fields', () => {
    const p = new SseParser();
    assert.deepEqual(p.push(': keepalive\n\nfoo: bar\n\n'), []);
    assert.equal(p.retryMs, null);
  });
});

// A campaign as GET /api/v1/campaigns/{id} shows it; `over` replaces fields (spec: merged).
const campaign = ({ spec = {}, ...over } = {}) => ({
  id: 1, name: 'c', state: 'running', backend: 'sim', error: '', created_at: 0, updated_at: 0,
  active: true, pending_action: null,
  ...over,
  spec: {
    backend: 'sim', contexts: [{ collective: 'bcast', comm_size: 4 }, { collective: 'bcast', comm_size: 8 }],
    sizes: '4:1024', strategy: 'bo', budget: 10, batch_size: 4, final_repeats: 3, ...spec,
  },
});
const job = (id, state, created, updated) => ({ id, campaign_id: 1, context_id: 1, tag: `t${id}`, backend: 'sim', backend_job_id: '', purpose: 'search', state, created_at: created, updated_at: updated });

describe('campaignProgress', () => {
  it('plans ceil(budget / batch) search jobs and one final job per context on sim', () => {
    const jobs = [job(1, 'done', 100, 110), job(2, 'done', 110, 130), job(3, 'running', 130, 130)];
    const p = progress.campaignProgress(campaign(), jobs, undefined, [1, 2], 135);
    assert.equal(p.jobsDone, 2);
    assert.equal(p.jobsPlanned, 2 * (Math.ceil(10 / 4) + 1));
    assert.equal(p.fraction, 2 / 8);
    assert.equal(p.meanJobSeconds, 15);
    // 6 jobs left at 15 s each, 5 s of the running one already spent.
    assert.equal(p.etaSeconds, 6 * 15 - 5);
  });

  it('adds the rules stage on backends that run the real Open MPI', () => {
    const p = progress.campaignProgress(campaign({ backend: 'local' }), [], undefined, [1, 2], 0);
    assert.equal(p.jobsPlanned, 2 * (3 + 1 + 1 + 2 * 3));
    const noVerify = progress.campaignProgress(campaign({ backend: 'local', spec: { verify: false } }), [], undefined, [1, 2], 0);
    assert.equal(noVerify.jobsPlanned, 2 * 4);
  });

  it('takes the plan from context_started when the spec has no budget, else says unknown', () => {
    const c = campaign({ spec: { budget: 0 } });
    assert.equal(progress.campaignProgress(c, [], undefined, [1, 2], 0).jobsPlanned, null);
    const plans = new Map([[1, { planned: 8, space: 50 }], [2, { planned: 12, space: 60 }]]);
    assert.equal(progress.campaignProgress(c, [], plans, [1, 2], 0).jobsPlanned, (2 + 1) + (3 + 1));
    const exhaustive = campaign({ spec: { budget: 0, strategy: 'exhaustive' } });
    const unannounced = new Map([[1, { planned: -1, space: 9 }], [2, { planned: -1, space: 4 }]]);
    assert.equal(progress.campaignProgress(exhaustive, [], unannounced, [1, 2], 0).jobsPlanned, (3 + 1) + (1 + 1));
  });

  it('reports a done campaign as complete with no ETA', () => {
    const p = progress.campaignProgress(campaign({ state: 'done' }), [job(1, 'done', 0, 1)], undefined, [1, 2], 5);
    assert.equal(p.fraction, 1);
    assert.equal(p.etaSeconds, null);
  });
});

describe('bestSpeedup and exhaustiveCost', () => {
  const report = {
    campaign: {}, results: [
      { collective: 'bcast', comm_size: 4, msg_size: 4, speedup: 1.2 },
      { collective: 'bcast', comm_size: 4, msg_size: 8, speedup: 1.7 },
      { collective: 'bcast', comm_size: 8, msg_size: 4, speedup: null },
    ],
    contexts: [{ id: 1, space: 40 }, { id: 2, space: 0 }],
    cost: { jobs: 5, runs: 20, benchmark_seconds: 10 },
  };

  it('prefers the final report and falls back to the search against the default', () => {
    assert.deepEqual(progress.bestSpeedup(report, null), { value: 1.7, provisional: false, where: 'bcast P=4 at 8 B' });
    const convergence = { contexts: [{ collective: 'bcast', comm_size: 4, sizes: [{ msg_size: 64, default_us: 10, best_us: [12, 8, 5] }, { msg_size: 128, default_us: null, best_us: [1] }] }] };
    assert.deepEqual(progress.bestSpeedup({ ...report, results: [] }, convergence), { value: 2, provisional: true, where: 'bcast P=4 at 64 B' });
    assert.equal(progress.bestSpeedup(null, null), null);
  });

  it('prices an exhaustive search at the campaign\'s mean time per run', () => {
    const plans = new Map([[2, { planned: 8, space: 24 }]]);
    const cost = progress.exhaustiveCost(campaign({ spec: { repeats: 2 } }), report, plans);
    assert.deepEqual(cost, { configurations: 64, jobs: (10 + 1) + (6 + 1), benchmarkSeconds: 64 * 2 * 0.5, known: true });
    assert.equal(progress.exhaustiveCost(campaign(), report, undefined).known, false);
  });
});

describe('result map cells', () => {
  const base = { collective: 'bcast', comm_size: 64, msg_size: 1024, best: { algorithm: 0, segsize: 0, fanout: 0 }, best_name: 'default', noise: 0.01, default_within_noise: true };
  it('marks a size the search never reached apart from measured and predicted ones', () => {
    const notRun = { ...base, source: 'not_run', note: 'not run: the whole-cluster search spent its budget before this comm size' };
    assert.equal(resultMap.cellClass(notRun), 'cell not-run');
    const text = resultMap.cellText(notRun);
    assert.match(text, /NOT RUN/);
    assert.match(text, /default/);
    assert.match(text, /spent its budget/);
    assert.equal(resultMap.cellClass({ ...base, source: 'measured' }), 'cell within-noise');
    assert.equal(resultMap.cellClass({ ...base, source: 'measured', default_within_noise: false }), 'cell');
    assert.equal(resultMap.cellClass({ ...base, source: 'predicted', confidence: 0.9 }), 'cell predicted');
    assert.doesNotMatch(resultMap.cellText({ ...base, source: 'measured', best_us: 1, default_us: 1, speedup: 1 }), /NOT RUN/);
  });
});
