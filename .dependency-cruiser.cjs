/**
 * The import rules of src/ (docs/architecture.md, "Layout"). `npm test` runs
 * `depcruise src` with these rules: a cycle or an import that runs up a layer fails the build.
 */
const LOWER = '^src/(kernel|util|store|hogql|geoip|flags/engine)/';
const FEATURES = '^src/(capture|cohorts|ingestion|flags/(evaluation|management|remote|threads)|events|persons|groups|tenancy|definitions|health|sessions|webapp|dashboards|insights|actions|transfer)/';
const ROOT_FILES = '^src/(main|app|app-context|routes)[.]ts$';

module.exports = {
  forbidden: [
    { name: 'no-cycles', severity: 'error', comment: 'Each cycle is a type in the wrong file or a file with two jobs.', from: {}, to: { circular: true } },
    {
      name: 'lower-layers-stay-lower',
      severity: 'error',
      comment: 'kernel, util, store, hogql, geoip and the flag engine know nothing of features, HTTP or the composition root.',
      from: { path: LOWER },
      to: { path: [FEATURES, '^src/http/', ROOT_FILES] },
    },
    {
      name: 'http-is-only-the-kit',
      severity: 'error',
      comment: 'http/ is the Fastify kit: features use it, never the other way round.',
      from: { path: '^src/http/' },
      to: { path: [FEATURES, ROOT_FILES] },
    },
    {
      name: 'features-take-narrow-dependencies',
      severity: 'error',
      comment: 'A feature gets what it needs as a parameter; only the composition root knows the whole application.',
      from: { path: FEATURES },
      to: { path: ROOT_FILES },
    },
    {
      name: 'config-is-read-at-the-root',
      severity: 'error',
      comment: 'Only the composition root reads the Config; lower layers get plain settings.',
      from: { path: [LOWER] },
      to: { path: '^src/config[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
