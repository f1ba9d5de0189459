// The command list, read from the files in src/commands at build time so that commands added by
// anyone are picked up without a hand-kept list. oclif's id rules: the path below src/commands
// joined with ":", an index file naming its directory.
import {readdirSync} from 'node:fs'
import {join, relative, sep} from 'node:path'

const SOURCE = /\.(ts|mts|tsx)$/
const SKIP = /\.(d|test|spec)\.(ts|mts|tsx)$/

/** [{id, dist}] sorted by id; dist is the compiled file relative to the package root, with "/" separators. */
export function listCommands(root) {
  const base = join(root, 'src', 'commands')
  const found = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, {withFileTypes: true})) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (SOURCE.test(entry.name) && !SKIP.test(entry.name)) {
        const parts = relative(base, path).split(sep)
        const name = parts.pop()
        const file = name.replace(SOURCE, '')
        const id = [...parts, file === 'index' ? '' : file].filter(Boolean).join(':')
        const dist = ['dist', 'commands', ...parts, `${file}.${name.endsWith('.mts') ? 'mjs' : 'js'}`].join('/')
        found.push({id, dist})
      }
    }
  }

  walk(base)
  if (found.length === 0) throw new Error(`no commands found in ${base}`)
  const ids = new Set()
  for (const {id} of found) {
    if (ids.has(id)) throw new Error(`two files in src/commands give the command id "${id}"`)
    ids.add(id)
  }

  return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
}
