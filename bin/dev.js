#!/usr/bin/env node
// Development entry: same compiled commands as run.js (`npm run build` first), but oclif ignores
// the manifest and prints full stacks, which helps while changing commands.
import {execute} from '@oclif/core'

await execute({development: true, dir: import.meta.url})
