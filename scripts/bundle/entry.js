// Entry of the one-file CommonJS bundles (dist/bundle/podctl.cjs, and podctl.quick.cjs with fewer
// commands: scripts/bundle/quick.mjs) that bin/run.js and the single executable load. Built by
// scripts/bundle/build.mjs; never loaded unbundled.
//
// oclif normally reads package.json and oclif.manifest.json from disk and loads each command
// through its module loader. Here both files are embedded at build time and the root plugin gets
// its commands from a map whose getters `require` each command inside the bundle, so a command's
// modules are evaluated only when it runs, and nothing outside the bundle is read. Plugin#_manifest
// and Plugin#loadCommandsFromTarget are oclif internals (stable across 4.x, not public): @oclif/core
// is pinned to a minor version and test/e2e/parity.test.ts compares this path with bin/dev.js.
//
// @oclif/core is imported, and the manifest built, when a podctl command runs, not with the bundle:
// the crictl personality never runs oclif, and evaluating oclif costs it about 5 ms of a 70 ms start.
import commands from 'podctl:commands'
import podctlManifest from 'podctl:manifest'
import pjson from 'podctl:package-json'
import {isLeftOut, LEFT_OUT} from 'podctl:left-out'

import {choosePersonality} from '../../dist/lib/crictl/personality.js'
import {endQuietlyOnClosedPipe} from '../../dist/lib/output/closed-pipe.js'
import {commandWords, normalizeArgv} from '../../dist/lib/util/argv.js'
import {reportUnknownCommand} from '../../dist/lib/util/suggest.js'

/** oclif's root plugin with the embedded manifest and the bundled command map. */
function bundledPlugin(Plugin, options) {
  class BundledPlugin extends Plugin {
    async _manifest() {
      const manifest = podctlManifest()
      this.hasManifest = true
      this.commandIDs = Object.keys(manifest.commands)
      return manifest
    }

    async loadCommandsFromTarget() {
      return commands
    }
  }

  return new BundledPlugin(options)
}

/**
 * Runs one podctl invocation like oclif's `run`: resolves with the command's result, rejects with
 * its error. root is the directory oclif reports as the CLI's root (the package, or the binary's).
 * program is the path the process was started as: named crictl (or PODCTL_PERSONALITY=crictl),
 * podctl is crictl's own front end (dist/lib/crictl/main.js, evaluated only then) and oclif never
 * runs; else argv goes through normalizeArgv (crictl's global flags before the command, `help X`),
 * as bin/dev.js does.
 */
export async function run(argv, root, program) {
  endQuietlyOnClosedPipe()
  if (choosePersonality(program) === 'crictl') {
    const {runCrictl} = await import('../../dist/lib/crictl/main.js')
    return runCrictl(argv, program, pjson.version)
  }

  const {Plugin, run: oclifRun} = await import('@oclif/core')
  const words = commandWords(podctlManifest())
  const args = normalizeArgv(argv, words)
  const plugin = bundledPlugin(Plugin, {isRoot: true, pjson: structuredClone(pjson), root})
  await plugin.load()
  return oclifRun(args, {pjson: plugin.pjson, plugins: new Map([[plugin.name, plugin]]), root}).catch((error) =>
    reportUnknownCommand(error, words),
  )
}

/**
 * Like oclif's `execute`: flushes stdout on success, prints the error and exits on failure. In the
 * quick bundle, a command it left out resolves LEFT_OUT, with nothing printed: the launcher then
 * runs the full bundle (src/launch.ts). oclif's flush only waits when stdout's buffer is full (its
 * write('') returns false), so with nothing waiting to drain oclif is not loaded for it (the crictl
 * personality's usual end).
 */
export function execute(argv, root, program) {
  return run(argv, root, program).then(
    (result) => {
      if (process.stdout.writableNeedDrain) import('@oclif/core').then(({flush}) => flush())
      return result
    },
    (error) => (isLeftOut(error) ? LEFT_OUT : import('@oclif/core').then(({handle}) => handle(error))),
  )
}
