/**
 * crictl's `exec CONTAINER CMD ARG...`: Go's flag parsing (urfave/cli) stops at the first word that is
 * not a flag, so crictl needs no "--" before the command. podctl keeps "--" working and, when it is
 * missing, puts it where crictl's parser would stop: before the first word after the container.
 */

/** argv with "--" before the command, unless one is there already. `takesValue(flag)`: whether that flag reads the next word. */
export function separateCommand(argv: readonly string[], takesValue: (flag: string) => boolean): string[] {
  let positional = 0
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index]
    if (token === '--') return [...argv]
    if (token.startsWith('-') && token.length > 1) {
      if (!token.includes('=') && takesValue(token)) index++
      continue
    }

    // The first word is the container; the second starts the command.
    if (++positional === 2) return [...argv.slice(0, index), '--', ...argv.slice(index)]
  }

  return [...argv]
}

/** The flag spellings (`--name`, `-c`) that take a value, from oclif flag definitions. */
export function valueFlagSpellings(flags: Record<string, {type: string; char?: string}>): Set<string> {
  const spellings = new Set<string>()
  for (const [name, flag] of Object.entries(flags)) {
    if (flag.type !== 'option') continue
    spellings.add(`--${name}`)
    if (flag.char) spellings.add(`-${flag.char}`)
  }

  return spellings
}
