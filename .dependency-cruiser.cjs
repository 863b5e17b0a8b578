/**
 * The layering of src/, checked by `npm run lint` (dependency-cruiser). Each folder is a feature
 * or a foundation; a folder may import those in the layers below its own, and the folders of its
 * own layer only where no cycle results. docs/architecture.md draws the graph
 * (`npm run docs:graph`).
 */
// dependency-cruiser loads its configuration as CommonJS.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { LAYERS } = require('./scripts/layers.cjs');

const folders = (names) => `^src/(${names.join('|')})/`;

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${i}-imports-no-layer-above`,
  comment: `${layer.join(', ')} may not import ${LAYERS.slice(i + 1)
    .flat()
    .join(', ')}`,
  severity: 'error',
  from: { path: folders(layer) },
  to: { path: folders(LAYERS.slice(i + 1).flat()) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-folder-cycles',
      comment: 'No two folders under src/ import each other, directly or through others.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'every-folder-in-a-layer',
      comment: 'A new folder under src/ goes in one of the layers above.',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: folders(LAYERS.flat()) },
      to: {},
    },
    {
      name: 'no-entry-point-imports',
      comment: 'main.ts, cli.ts and openapi-document.ts start processes; nothing imports them.',
      severity: 'error',
      from: {},
      to: { path: '^src/(main|cli|openapi-document)\\.ts$' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // Every import the source has, type-only ones and those only Nest's injection uses included.
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
  },
};
