// Bundles the dashboard with esbuild into dist/: assets/main-<hash>.js and .css (every script and
// style, uPlot included) and an index.html that loads them by relative URL.
//   node scripts/build.mjs            one build (minified)
//   node scripts/build.mjs --watch    rebuild on every change (the daemon serves dist/)
import { build, context } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const watch = process.argv.includes('--watch');

// Writes dist/index.html from index.html with the hashed bundle names of this build.
const writeIndex = {
  name: 'write-index',
  setup(b) {
    b.onEnd((result) => {
      if (result.errors.length) return;
      const outputs = Object.keys(result.metafile.outputs).map((p) => path.relative(dist, path.resolve(root, p)));
      const js = outputs.find((o) => o.endsWith('.js'));
      const css = outputs.find((o) => o.endsWith('.css'));
      let html = fs.readFileSync(path.join(root, 'index.html'), 'utf8');
      const entry = '<script type="module" src="/src/main.ts"></script>';
      if (!html.includes(entry)) throw new Error(`index.html must load the entry as ${entry}`);
      html = html.replace(entry, `<script type="module" src="./${js}"></script>`);
      if (css) html = html.replace('</head>', `  <link rel="stylesheet" href="./${css}" />\n  </head>`);
      fs.writeFileSync(path.join(dist, 'index.html'), html);
      for (const old of fs.readdirSync(path.join(dist, 'assets'))) {
        if (!outputs.includes(`assets/${old}`)) fs.rmSync(path.join(dist, 'assets', old));
      }
      if (watch) console.log(`rebuilt ${js}`);
    });
  },
};

const options = {
  absWorkingDir: root,
  entryPoints: ['src/main.ts'],
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: !watch,
  sourcemap: watch ? 'linked' : false,
  outdir: path.join(dist, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
  plugins: [writeIndex],
};

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'assets'), { recursive: true });
if (watch) {
  const ctx = await context(options);
  await ctx.watch();
  console.log('watching src/ (Ctrl-C to stop)');
} else {
  const result = await build(options);
  const sizes = Object.entries(result.metafile.outputs).map(([p, o]) => `${path.relative(root, path.resolve(root, p))} ${(o.bytes / 1024).toFixed(1)} KiB`);
  console.log(sizes.join('\n'));
}
