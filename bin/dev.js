#!/usr/bin/env node
// Development entry: the unbundled ESM path (dist/ from tsc, commands through dist/command-index.js;
// `npm run build` first). oclif prints full stacks here, which helps while changing commands.
// bin/run.js runs the same code from the bundle; test/e2e/parity.test.ts keeps the two alike.
import {execute} from '@oclif/core'

await execute({development: true, dir: import.meta.url})
