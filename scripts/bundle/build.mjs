#!/usr/bin/env node
// Builds dist/bundle/podctl.cjs: the whole CLI (podctl's compiled dist/, oclif, grpc-js, chalk,
// cli-table3, ora, yaml, …) in one CommonJS file, then trains its V8 code caches
// (scripts/bundle/train.mjs). Run by `npm run build` after tsc, the command index and
// `oclif manifest`; also the library's CommonJS entry (library-cjs.mjs).
//
// The file holds one function expression,
//   (function (exports, require, module, __filename, __dirname) { …bundle… })
// preceded by a first line "// podctl-bundle <sha256 of the rest>", so that bin/run.js can compile
// it with vm.Script and a cache, and tie caches to the exact bundle they were made from.
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {builtinModules} from 'node:module'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {rolldown} from 'rolldown'

import {listCommands} from './commands.mjs'
import {grpcPatches} from './grpc-patches.mjs'
import {buildLibraryCjs} from './library-cjs.mjs'
import {oclifPatches} from './oclif-patches.mjs'
import {leaveOutCrictlActions, leftOutModule, quickContents} from './quick.mjs'
import {stringWidthPatch} from './string-width-patch.mjs'
import {writeNotices} from './notices.mjs'
import {trainCaches} from './train.mjs'
import {uiViewOutside, writeUiViewLoader} from './ui-view.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const OUT_DIR = join(ROOT, 'dist', 'bundle')
export const BUNDLE = join(OUT_DIR, 'podctl.cjs')
export const QUICK_BUNDLE = join(OUT_DIR, 'podctl.quick.cjs')

// oclif (read-tsconfig) and grpc-js (channelz, orca) `require` these inside try/catch or only when
// a feature is used; inlined they would triple the bundle. Left as plain requires: absent in the
// single executable, where those code paths are never taken.
const EXTERNAL = ['typescript', '@grpc/proto-loader']

/**
 * Virtual modules: the lazy command map, package.json and the manifest embedded as data, and
 * podctl:left-out (quick.mjs). With `keep` (the quick bundle's commands), the map's getters of the
 * other commands throw leftOut.
 */
function embedded({leftOutKey, keep}) {
  const modules = {
    'podctl:commands'() {
      const lines = ["import {leftOut} from 'podctl:left-out';", 'const commands = {};']
      for (const {id, dist} of listCommands(ROOT)) {
        const file = join(ROOT, dist)
        if (!existsSync(file)) throw new Error(`${dist} is missing: run tsc first (npm run build)`)
        // require (not import) so that the command's modules are evaluated on first access only.
        const load = !keep || keep.has(id) ? `require(${JSON.stringify(file)}).default` : `leftOut(${JSON.stringify(`the command ${id}`)})`
        lines.push(`Object.defineProperty(commands, ${JSON.stringify(id)}, {enumerable: true, get: () => ${load}});`)
      }

      lines.push('export default commands;')
      return lines.join('\n')
    },
    'podctl:left-out'() {
      return leftOutModule(leftOutKey)
    },
    // A function that makes the manifest on its first call: the object (about 200 KB of help text and
    // flags) is built only when oclif runs, never for the crictl personality.
    'podctl:manifest'() {
      const path = join(ROOT, 'oclif.manifest.json')
      if (!existsSync(path)) throw new Error('oclif.manifest.json is missing: run `oclif manifest` first (npm run build)')
      return `let manifest;\nexport default function podctlManifest() {\n  return (manifest ??= ${readFileSync(path, 'utf8')});\n}`
    },
    // The help class of package.json's oclif.helpClass, bundled (oclif-patches.mjs makes loadHelpClass take it).
    'podctl:help'() {
      const {helpClass} = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).oclif
      return `export {default} from ${JSON.stringify(join(ROOT, helpClass))};`
    },
    'podctl:package-json'() {
      const {name, version, description, license, engines, dependencies, oclif} = JSON.parse(
        readFileSync(join(ROOT, 'package.json'), 'utf8'),
      )
      return `export default ${JSON.stringify({name, version, description, license, type: 'commonjs', engines, dependencies, oclif})};`
    },
  }
  return {
    name: 'podctl-embedded',
    resolveId(source) {
      return source in modules ? `\0${source}` : null
    },
    load(id) {
      return id.startsWith('\0') && id.slice(1) in modules ? modules[id.slice(1)]() : null
    },
  }
}

/**
 * Node's built-in modules as tiny CommonJS modules inside the bundle. rolldown hoists an ES
 * module's imports of externals to the top of a CommonJS bundle, so `import … from
 * 'node:child_process'` in a module that is never evaluated (wsl-utils, used on Windows) would still
 * load child_process on every start. Wrapped like this, a built-in loads when its importer runs.
 */
function lazyBuiltins() {
  const PREFIX = '\0builtin:'
  return {
    name: 'podctl-lazy-builtins',
    resolveId(source, importer) {
      const name = source.startsWith('node:') ? source.slice(5) : source
      if (!source.startsWith('node:') && !builtinModules.includes(source)) return null
      if (importer?.startsWith(PREFIX)) return {id: `node:${name}`, external: true}
      return {id: `${PREFIX}${name}`}
    },
    load(id) {
      return id.startsWith(PREFIX) ? `module.exports = require(${JSON.stringify(`node:${id.slice(PREFIX.length)}`)});` : null
    },
  }
}

const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) {\n'
const WRAP_TAIL = '\n})'

/**
 * Builds both bundles (src/launch.ts): podctl.cjs with every command, podctl.quick.cjs with only
 * the quick groups' commands, each with its own id.
 */
export async function buildBundles() {
  const started = performance.now()
  const quick = await quickContents(ROOT)
  rmSync(OUT_DIR, {recursive: true, force: true})
  mkdirSync(OUT_DIR, {recursive: true})
  const full = await buildBundle(BUNDLE, [embedded({leftOutKey: quick.leftOutKey}), uiViewOutside(ROOT)])
  const quickBundle = await buildBundle(QUICK_BUNDLE, [
    embedded({leftOutKey: quick.leftOutKey, keep: quick.commands}),
    uiViewOutside(ROOT, {required: false}),
    leaveOutCrictlActions(ROOT, quick.crictlActions),
  ])
  writeUiViewLoader(OUT_DIR)
  writeNotices(full.modules, join(OUT_DIR, 'THIRD_PARTY_NOTICES'), join(ROOT, 'THIRD_PARTY_NOTICES'))
  const ms = performance.now() - started
  const size = (bundle) => `${relative(ROOT, bundle.file)} (${bundle.modules.length} modules, ${(bundle.bytes / 1e6).toFixed(2)} MB)`
  console.error(`bundled ${size(full)} and ${size(quickBundle)} in ${ms.toFixed(0)} ms`)
  return {full, quick: quickBundle}
}

/** One bundle: the entry with these plugins before the shared ones, written to file. */
async function buildBundle(file, plugins) {
  const bundle = await rolldown({
    input: join(ROOT, 'scripts', 'bundle', 'entry.js'),
    platform: 'node',
    external: (id) => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`)),
    plugins: [...plugins, lazyBuiltins(), oclifPatches(), grpcPatches(), stringWidthPatch(ROOT)],
    logLevel: 'warn',
    onLog(level, log, handler) {
      // Circular imports inside dependencies and eval in them are theirs to keep; everything else is shown.
      if (log.code === 'CIRCULAR_DEPENDENCY' || log.code === 'EVAL') return
      // A module the bundle cannot find would silently become a require() that fails at run time.
      if (log.code === 'UNRESOLVED_IMPORT') throw new Error(log.message)
      handler(level, log)
    },
  })
  const {output} = await bundle.generate({
    format: 'cjs',
    codeSplitting: false,
    charset: 'ascii',
    comments: false,
    sourcemap: false,
    // A smaller file is less to read and copy into a string on every start (2.1 → 1.4 MB). Local
    // names are shortened, function and class names kept (oclif and errors show them); no
    // compression passes, so the code does what the sources say.
    minify: {compress: false, mangle: {keepNames: true}, codegen: {removeWhitespace: true}},
  })
  await bundle.close()
  if (output.length !== 1) throw new Error(`expected one bundle file, got ${output.map((o) => o.fileName).join(', ')}`)
  const [chunk] = output
  const body = `${WRAP_HEAD}${chunk.code}${WRAP_TAIL}`
  // ASCII only, so bin/run.js can read it as latin1 into a one-byte V8 string.
  // eslint-disable-next-line no-control-regex -- the range starts at NUL on purpose: everything outside ASCII
  const nonAscii = /[^\u0000-\u007F]/.exec(body)
  if (nonAscii)
    throw new Error(
      `${relative(ROOT, file)} has a non-ASCII character at offset ${nonAscii.index}: ` +
        JSON.stringify(body.slice(nonAscii.index - 40, nonAscii.index + 40)),
    )
  const id = createHash('sha256').update(body).digest('hex').slice(0, 32)
  writeFileSync(file, `// podctl-bundle ${id}\n${body}`)
  return {file, id, modules: chunk.moduleIds, bytes: body.length}
}

export const LAUNCHER = join(OUT_DIR, 'launch.cjs')

/**
 * dist/launch.js (src/launch.ts) as one CommonJS file for bin/run.js: a CommonJS start never loads
 * Node's ESM loader. It imports only Node's built-ins, so nothing else is inlined.
 */
export async function buildLauncher() {
  const launcher = await rolldown({input: join(ROOT, 'dist', 'launch.js'), platform: 'node', logLevel: 'warn'})
  const {output} = await launcher.generate({format: 'cjs', codeSplitting: false, comments: false})
  await launcher.close()
  if (output.length !== 1 || output[0].imports.some((id) => !id.startsWith('node:')))
    throw new Error(`src/launch.ts must import only Node's built-ins (got ${output.flatMap((o) => o.imports).join(', ')})`)
  writeFileSync(LAUNCHER, output[0].code)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildBundles()
  await buildLauncher()
  await buildLibraryCjs()
  trainCaches({full: BUNDLE, quick: QUICK_BUNDLE, outDir: OUT_DIR})
}
