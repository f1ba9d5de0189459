#!/usr/bin/env node
// Prints the exit-code table for the README from src/lib/errors.ts (via dist), so the docs and
// the code cannot drift apart. `npm run build` first.
import {EXIT_CODE_DOCS} from '../dist/lib/errors.js'

console.log('| Exit code | Name | Meaning |\n|---|---|---|')
for (const [code, name, meaning] of EXIT_CODE_DOCS) console.log(`| ${code} | \`${name}\` | ${meaning} |`)
