#!/usr/bin/env node
// Writes the README's generated sections from the code, so the docs cannot drift from it:
// the exit-code table from src/lib/errors.ts (via dist; `npm run build` first). The command
// reference is not in the README: `oclif readme --readme-path docs/commands.md` writes it between
// that page's <!-- commands --> markers (see `npm run readme`).
import {readFileSync, writeFileSync} from 'node:fs'

import {EXIT_CODE_DOCS} from '../dist/lib/errors.js'

export function exitCodeTable() {
  const rows = EXIT_CODE_DOCS.map(([code, name, meaning]) => `| ${code} | \`${name}\` | ${meaning} |`)
  return ['| Exit code | Name | Meaning |', '|---|---|---|', ...rows].join('\n')
}

const path = new URL('../README.md', import.meta.url)
const readme = readFileSync(path, 'utf8')
const updated = readme.replace(
  /<!-- exit-codes -->[\s\S]*?<!-- exit-codes-stop -->/,
  `<!-- exit-codes -->\n${exitCodeTable()}\n<!-- exit-codes-stop -->`,
)
writeFileSync(path, updated)
