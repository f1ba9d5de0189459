// The unbundled start (dist/ from tsc, commands through dist/command-index.js) that bin/dev.js and,
// without a bundle, bin/run.js use: the personality from the program's name (or PODCTL_PERSONALITY),
// then crictl's own front end (dist/lib/crictl/main.js, no oclif), or podctl's command line
// (normalizeArgv) and oclif.
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
  const [personality, {endQuietlyOnClosedPipe}] = await Promise.all([
    import('../dist/lib/crictl/personality.js'),
    import('../dist/lib/output/closed-pipe.js'),
  ])
  endQuietlyOnClosedPipe()
  if (personality.choosePersonality(program) === 'crictl') {
    const {runCrictl} = await import('../dist/lib/crictl/main.js')
    return runCrictl(argv, program, require('../package.json').version)
  }

  const [oclif, {commandWords, normalizeArgv}, {reportUnknownCommand}] = await Promise.all([
    import('@oclif/core'),
    import('../dist/lib/util/argv.js'),
    import('../dist/lib/util/suggest.js'),
  ])

  const words = readCommandWords(commandWords)
  const args = normalizeArgv(argv, words)

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
