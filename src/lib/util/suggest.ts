/**
 * "Did you mean": the closest known word to a mistyped one (a command, a flag), as git and kubectl
 * suggest. Distance is optimal string alignment (Levenshtein plus swapping two neighbours), so
 * `pdos` is one step from `pods`; a word is suggested only when it is close for its length.
 */

/** Edits (insert, delete, substitute, swap neighbours) between a and b. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({length: a.length + 1}, (_, i) => Array.from({length: b.length + 1}, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }

  return rows[a.length][b.length]
}

/** The known word closest to `word`, if one is within a third of its length (at least 1, at most 3 edits). */
export function closest(word: string, known: Iterable<string>): string | undefined {
  const limit = Math.min(3, Math.max(1, Math.floor(word.length / 3)))
  let best: {word: string; distance: number} | undefined
  for (const candidate of known) {
    const distance = editDistance(word, candidate)
    if (distance <= limit && (best === undefined || distance < best.distance)) best = {word: candidate, distance}
  }

  return best?.word
}

/** `unknown command "pdos"; did you mean pods? ...`: the line an entry prints for a command that does not exist. */
export function unknownCommandMessage(word: string, commands: Iterable<string>, bin = 'podctl'): string {
  // Only flags were given, and this one is not global: there is no command to give it to.
  if (word.startsWith('-')) return `${word} is not a global flag and no command follows it; give the command too (${bin} --help lists them)`
  const near = closest(word, commands)
  return `unknown command "${word}"${near ? `; did you mean ${near}?` : ''} (${bin} --help lists the commands)`
}

/**
 * For oclif's "Nonexistent flag" parse error: " (did you mean --namespace?)" when one of the
 * unknown long flags is close to one the command has, else "".
 */
export function flagSuggestion(error: unknown): string {
  const {flags, parse} = error as {flags?: unknown; parse?: {input?: {flags?: Record<string, unknown>}}}
  if (!Array.isArray(flags) || !parse?.input?.flags) return ''
  const known = Object.keys(parse.input.flags)
  for (const flag of flags) {
    const name = /^--([^=]+)/.exec(String(flag))?.[1]
    const near = name === undefined ? undefined : closest(name, known)
    if (near) return ` (did you mean --${near}?)`
  }

  return ''
}

/** The word oclif could not find as a command, from its "command X not found" error; undefined for any other error. */
export function notFoundCommand(error: unknown): string | undefined {
  const {message, oclif} = (error ?? {}) as {message?: unknown; oclif?: {exit?: number}}
  if (oclif?.exit !== 2 && oclif?.exit !== 127) return undefined
  return /^command (\S+) not found$/.exec(String(message))?.[1]
}

/**
 * The entries' handler for a failed oclif run: a command that does not exist is one line on stderr
 * with the nearest command, exit 2 (UsageError); any other error is thrown on, for oclif to handle.
 */
export function reportUnknownCommand(error: unknown, commands: Iterable<string> | undefined): void {
  const word = notFoundCommand(error)
  if (word === undefined || commands === undefined) throw error
  process.stderr.write(`Error: ${unknownCommandMessage(word, commands)}\n`)
  process.exitCode = 2
}
