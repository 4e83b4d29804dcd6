/**
 * Builds the web app into dist/web/, where the server reads it from. Hashed file names under
 * assets/ let the server cache them for a year; nothing is inlined as a data: URL, so the
 * content security policy can allow this origin alone.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: true,
    modulePreload: { polyfill: false },
  },
  // `npm run dev:web`: the app with hot reload, the API from a server started with `npm start`.
  server: {
    proxy: Object.fromEntries(['/api', '/flags', '/decide', '/batch', '/_health'].map((path) => [path, 'http://localhost:8000'])),
  },
});
