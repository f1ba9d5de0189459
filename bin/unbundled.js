// The unbundled start (dist/ from tsc, commands through dist/command-index.js) that bin/dev.js and,
// without a bundle, bin/run.js use: the personality from the program's name (or PODCTL_PERSONALITY),
// then crictl's command line (dist/lib/crictl/main.js) or podctl's (normalizeArgv), then oclif.
// CommonJS (bin/package.json), like the scripts that require it.
'use strict'
const {dirname} = require('node:path')

const root = dirname(__dirname)

/** The command words from oclif.manifest.json (written by the build), so flags before the command can move behind it. */
const readCommandWords = (commandWords) => {
  try {
    return commandWords(require('../oclif.manifest.json'))
  } catch {}
}

const startUnbundled = async ({program, argv, development}) => {
  const [oclif, personality, {commandWords, normalizeArgv}, {endQuietlyOnClosedPipe}, {reportUnknownCommand}] = await Promise.all([
    import('@oclif/core'),
    import('../dist/lib/crictl/personality.js'),
    import('../dist/lib/util/argv.js'),
    import('../dist/lib/output/closed-pipe.js'),
    import('../dist/lib/util/suggest.js'),
  ])
  endQuietlyOnClosedPipe()
  const chosen = personality.personalityFromEnv() ?? personality.personalityOf(program)
  personality.setPersonality(chosen)
  let args
  let words
  if (chosen === 'crictl') {
    const {crictlArgv} = await import('../dist/lib/crictl/main.js')
    args = crictlArgv(argv, require('../package.json').version)
    if (args === undefined) return
  } else {
    words = readCommandWords(commandWords)
    args = normalizeArgv(argv, words)
  }

  // oclif's execute(), with podctl's line for a command that does not exist (as the bundle's entry).
  if (development) {
    process.env.NODE_ENV = 'development'
    oclif.settings.debug = true
  }

  return oclif
    .run(args, root)
    .catch((error) => reportUnknownCommand(error, words))
    .then(
      (result) => {
        oclif.flush()
        return result
      },
      (error) => oclif.handle(error),
    )
}

module.exports = {startUnbundled}
