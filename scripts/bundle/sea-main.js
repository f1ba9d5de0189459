// Main script of the single executable (npm run build:binary): the same start as bin/run.js, with
// the bundles and their trained caches read from the executable's own assets instead of dist/.
// Bundled with src/launch.ts into one CommonJS file by scripts/bundle/binary.mjs.
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {getAsset} from 'node:sea'

import {FULL_BUNDLE, launch} from '../../dist/launch.js'
import {personalityOf} from '../../dist/lib/crictl/personality.js'

const root = dirname(process.execPath)
// The bundles and caches are assets under their shipped names (FULL_BUNDLE, QUICK_BUNDLE, shippedCacheName).
const readAsset = (name) => {
  try {
    return Buffer.from(getAsset(name))
  } catch {
    // No such asset: a group without a cache of its own.
  }
}

// The bundles are ASCII (the build checks), so latin1 makes a one-byte string without decoding.
// Stack traces name a bundle as if beside the executable; `require` of the optional externals looks there.
const readBundle = (name) => {
  const asset = readAsset(name)
  return asset && {source: asset.toString('latin1'), filename: join(root, name)}
}

// The program's name picks the personality. process.execPath is the executable's real path (Linux
// resolves links through /proc/self/exe), so a link `crictl -> podctl` shows only in argv0.
const program = personalityOf(process.argv0) === 'crictl' ? process.argv0 : process.execPath
const requireFn = createRequire(join(root, FULL_BUNDLE))
launch({readBundle, readShippedCache: readAsset, root, program, argv: process.argv.slice(2), requireFn})
