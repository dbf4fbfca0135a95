import { defineConfig } from 'vite';

// The daemon serves dist/ at `/`; relative asset URLs keep it working under any mount path.
export default defineConfig({
  base: './',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 300,
  },
  server: {
    // `npm run dev` against a daemon on :8080 (COLLTUNE_URL to change).
    proxy: { '/api': process.env.COLLTUNE_URL ?? 'http://127.0.0.1:8080' },
  },
});
