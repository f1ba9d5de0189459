// Main script of the single executable (npm run build:binary): the same start as bin/run.js, with
// the bundle and its trained caches read from the executable's own assets instead of dist/.
// Bundled with src/launch.ts into one CommonJS file by scripts/bundle/binary.mjs.
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {getAsset} from 'node:sea'

import {launch} from '../../dist/launch.js'
import {personalityOf} from '../../dist/lib/crictl/personality.js'

const root = dirname(process.execPath)
// The bundle is ASCII (the build checks), so latin1 makes a one-byte string without decoding.
const source = Buffer.from(getAsset('podctl.cjs')).toString('latin1')
// The caches are assets under their shipped names (shippedCacheName).
const readShippedCache = (name) => {
  try {
    return Buffer.from(getAsset(name))
  } catch {
    // No such asset: a group without a cache of its own.
  }
}

// Stack traces name the bundle; `require` of the optional externals looks beside the executable.
const filename = join(root, 'podctl.cjs')
// The program's name picks the personality. process.execPath is the executable's real path (Linux
// resolves links through /proc/self/exe), so a link `crictl -> podctl` shows only in argv0.
const program = personalityOf(process.argv0) === 'crictl' ? process.argv0 : process.execPath
launch({source, filename, readShippedCache, root, program, argv: process.argv.slice(2), requireFn: createRequire(filename)})
