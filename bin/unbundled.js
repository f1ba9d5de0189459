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
  const [{execute}, personality, {commandWords, normalizeArgv}, {endQuietlyOnClosedPipe}] = await Promise.all([
    import('@oclif/core'),
    import('../dist/lib/crictl/personality.js'),
    import('../dist/lib/util/argv.js'),
    import('../dist/lib/output/closed-pipe.js'),
  ])
  endQuietlyOnClosedPipe()
  const chosen = personality.personalityFromEnv() ?? personality.personalityOf(program)
  personality.setPersonality(chosen)
  let args
  if (chosen === 'crictl') {
    const {crictlArgv} = await import('../dist/lib/crictl/main.js')
    args = crictlArgv(argv, require('../package.json').version)
    if (args === undefined) return
  } else args = normalizeArgv(argv, readCommandWords(commandWords))
  return execute({development, dir: root, args})
}

module.exports = {startUnbundled}
