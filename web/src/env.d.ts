// Style sheets are imported for their side effect; esbuild bundles them into one .css file.
declare module '*.css';
