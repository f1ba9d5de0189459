/**
 * The host's own programs podctl runs to enter a container (util-linux's nsenter and script, and a
 * POSIX shell), found once by absolute path: what runs before the container's namespaces are
 * entered comes from the host and never from a PATH the container's environment sets.
 */
import {accessSync, constants} from 'node:fs'
import {delimiter} from 'node:path'

import {HostAccessError} from '../errors.js'

const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']

const found = new Map<string, string>()

/** The absolute path of a host program, searched in PATH and the system directories; `why` says what needs it. */
export function hostProgram(name: string, why: string, path = process.env.PATH ?? ''): string {
  const known = found.get(name)
  if (known) return known
  for (const directory of [...path.split(delimiter).filter((entry) => entry.startsWith('/')), ...SYSTEM_PATH]) {
    const candidate = `${directory}/${name}`
    try {
      accessSync(candidate, constants.X_OK)
      found.set(name, candidate)
      return candidate
    } catch {
      // Not here.
    }
  }

  throw new HostAccessError(`${name} is not installed on this host (${why}); install util-linux`)
}

/** A word for `sh -c`, quoted so the shell reads it back unchanged. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", String.raw`'\''`)}'`
}
