/**
 * Starts podctl from one of its one-file bundles (dist/bundle/, built by scripts/bundle/) with a V8
 * code cache, so that a start costs about what a plain HTTP/2 script costs: no module resolution,
 * no file reads beyond two, and no compiling of the functions the cache holds.
 * Used by bin/run.js, by the single executable's launcher and by the build's cache training.
 *
 * Bundles: podctl.cjs holds every command. podctl.quick.cjs holds only what the groups with a
 * cache of their own run (QUICK_GROUPS: the listings, status, version and all help), so the
 * commands scripts call in loops read fewer bytes and deserialise less code. A start costs in
 * proportion to the bundle's top-level code as well as to what the command runs: a compiled bundle
 * holds a function for every module-level function of every module, used or not. The quick
 * bundle is only a guess made from the command line: asked for a command it left out (before
 * that command did anything), it answers LEFT_OUT and the full bundle runs the same invocation.
 *
 * Caches, in the order tried:
 *   1. the per-user cache, ~/.cache/podctl/ (XDG_CACHE_HOME), written when 2 and 3 were missing or
 *      rejected (another Node version, V8 flags) and keyed by bundle, Node version, arch and flags;
 *   2. for the quick bundle, the cache shipped for the invocation's group (cacheGroup: pods, ps,
 *      status, help, …), trained at build time by running only that group's commands;
 *   3. for the full bundle, the cache shipped for everything else, trained on all the common commands.
 * A cache made after running holds the lazily compiled functions; one made at compile time holds
 * little. A group's own cache holds only what its commands compile, and deserialising a cache costs
 * in proportion to its size (`--help` from the help cache reads half the bytes), so the common
 * commands each get theirs. V8 checks a cache only against the source's length, so each cache
 * starts with a header naming the bundle's hash. PODCTL_CODE_CACHE=0 compiles without any cache and
 * writes none.
 *
 * Keep this module free of imports beyond Node's built-ins: it runs before anything is cached.
 */
import {mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {homedir} from 'node:os'
import {basename, dirname, join} from 'node:path'
import {Script} from 'node:vm'

/** What the bundle exports (scripts/bundle/entry.js). */
export interface BundleExports {
  /** program: the path the process was started as; its name picks the personality (crictl or podctl). */
  run(argv: string[], root: string, program?: string): Promise<unknown>
  execute(argv: string[], root: string, program?: string): Promise<unknown>
}

export interface CompiledBundle {
  script: Script
  exports: BundleExports
  /** The bundle's hash, from its first line. */
  id: string
  /** True when V8 took the cache it was given. */
  cacheAccepted: boolean
}

/** The bundle with every command, and the one with only the commands of QUICK_GROUPS (see above). */
export const FULL_BUNDLE = 'podctl.cjs'
export const QUICK_BUNDLE = 'podctl.quick.cjs'

/**
 * The groups that have a shipped cache of their own and run from the quick bundle: the keys of
 * test/support/training.ts trainingGroups, which a unit test keeps in step with this set.
 */
export const QUICK_GROUPS: ReadonlySet<string> = new Set(['pods', 'ps', 'images', 'status', 'version', 'help'])

/**
 * What the quick bundle's execute resolves with when the invocation needs a command it left out,
 * and the mark on the error that says so inside it (scripts/bundle/build.mjs). Symbol.for: the
 * bundle and this launcher are compiled apart and share no module.
 */
export const LEFT_OUT_KEY = 'podctl.leftOutOfThisBundle'
export const LEFT_OUT = Symbol.for(LEFT_OUT_KEY)

const ID_LINE = /^\/\/ podctl-bundle ([0-9a-f]+)\n/
const CACHE_MAGIC = 'podctl-cache'
const MAX_USER_CACHES = 8

export function bundleId(source: string): string {
  const match = ID_LINE.exec(source.slice(0, 64))
  if (!match) throw new Error('not a podctl bundle (no "// podctl-bundle <id>" first line)')
  return match[1]
}

/** The header line every cache starts with: which bundle, Node and arch it belongs to, and which commands trained it. */
export function cacheHeader(id: string, commands: readonly string[]): string {
  return `${CACHE_MAGIC} ${id} ${process.version} ${process.arch} ${[...new Set(commands)].sort().join(',') || '-'}\n`
}

interface CacheFile {
  data: Buffer
  commands: string[]
}

/** The V8 data of a cache file if its header names this bundle, Node and arch; else undefined. */
export function parseCache(file: Buffer | undefined, id: string): CacheFile | undefined {
  if (!file) return undefined
  const newline = file.indexOf(10)
  if (newline === -1 || newline > 4096) return undefined
  const [magic, cacheId, node, arch, commands] = file.toString('latin1', 0, newline).split(' ')
  if (magic !== CACHE_MAGIC || cacheId !== id || node !== process.version || arch !== process.arch) return undefined
  return {data: file.subarray(newline + 1), commands: commands === '-' ? [] : commands.split(',')}
}

/** Compiles the bundle with a cache (if any) and evaluates it as a CommonJS module. */
export function compileBundle(
  source: string,
  filename: string,
  cachedData?: Buffer,
  requireFn: NodeJS.Require = createRequire(filename),
): CompiledBundle {
  const id = bundleId(source)
  const script = new Script(source, {filename, cachedData})
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: object,
    filename: string,
    dirname: string,
  ) => void
  const module = {exports: {} as BundleExports}
  wrapper.call(module.exports, module.exports, requireFn, module, filename, dirname(filename))
  return {script, exports: module.exports, id, cacheAccepted: cachedData !== undefined && script.cachedDataRejected === false}
}

/** A short stable hash of the V8 flags this process runs with: a cache made under other flags is rejected. */
function flagsKey(): string {
  const flags = `${process.execArgv.join(' ')}\0${process.env.NODE_OPTIONS ?? ''}`
  let hash = 0x81_1c_9d_c5
  // FNV-1a over UTF-16 code units, as the cache key has always been computed.
  // eslint-disable-next-line unicorn/prefer-code-point -- code units, not code points, keep the key stable
  for (let i = 0; i < flags.length; i++) hash = Math.imul(hash ^ flags.charCodeAt(i), 0x01_00_01_93)
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/**
 * Global flags that take a value (BaseCommand.baseFlags, util/argv.ts GLOBAL_FLAGS; a unit test
 * keeps them in step): their value is not the command. Repeated here because this module may not
 * import podctl's own modules.
 */
export const GLOBAL_VALUE_FLAGS: ReadonlySet<string> = new Set([
  '-r',
  '--runtime-endpoint',
  '-i',
  '--image-endpoint',
  '-c',
  '--config',
  '-t',
  '--timeout',
  '--connect-timeout',
])

/** Whether the command line asks for help (before any `--`), and its words: what is not a flag or a global flag's value. */
function readCommandLine(argv: readonly string[]): {help: boolean; words: string[]} {
  const words: string[] = []
  let help = false
  for (let i = 0; i < argv.length && argv[i] !== '--'; i++) {
    const token = argv[i]
    if (token === '--help' || token === '-h') help = true
    else if (!token.startsWith('-')) words.push(token)
    else if (words.length === 0 && GLOBAL_VALUE_FLAGS.has(token)) i++
  }

  return {help, words}
}

/**
 * The group of commands whose shipped cache fits this invocation: `help` for help and `--version`
 * in any spelling, else the command's name (the first word that is not a flag or a global flag's
 * value). Only a hint: any cache of the same bundle is correct, a better fitting one is smaller.
 */
export function cacheGroup(argv: readonly string[]): string {
  const {help, words} = readCommandLine(argv)
  const [command] = words
  if (help || command === undefined || command === 'help' || command === 'h') return 'help'
  return /^[a-z][a-z-]*$/.test(command) ? command : 'other'
}

/**
 * Whether to start from the quick bundle: for a command of QUICK_GROUPS, and for help on no
 * command or on one of them. Help on any other command would load that command's class (every
 * command has a flag whose help is computed, so oclif loads the class to show it), which only the
 * full bundle holds. Only a guess, like cacheGroup: a wrong one costs a second start, not a wrong result.
 */
export function startsQuick(argv: readonly string[]): boolean {
  const group = cacheGroup(argv)
  if (group !== 'help') return QUICK_GROUPS.has(group)
  const {words} = readCommandLine(argv)
  const subject = words[0] === 'help' || words[0] === 'h' ? words[1] : words[0]
  return subject === undefined || QUICK_GROUPS.has(subject)
}

/** The file (or single-executable asset) name of the cache shipped for a group, or with none the general one. */
export function shippedCacheName(group?: string): string {
  return group ? `podctl.${group}.cache` : 'podctl.cache'
}

export function userCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'podctl')
}

function readOptional(path: string): Buffer | undefined {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

/** Writes a cache atomically (temporary file, then rename) and keeps the directory small; never throws. */
function writeCache(dir: string, name: string, header: string, data: Buffer): void {
  try {
    mkdirSync(dir, {recursive: true})
    const path = join(dir, name)
    const temporary = `${path}.${process.pid}.tmp`
    writeFileSync(temporary, Buffer.concat([Buffer.from(header, 'latin1'), data]))
    renameSync(temporary, path)
    const caches = readdirSync(dir)
      .filter((file) => file.endsWith('.cache'))
      .map((file) => ({file, mtime: statSync(join(dir, file)).mtimeMs}))
      .sort((a, b) => b.mtime - a.mtime)
    for (const {file} of caches.slice(MAX_USER_CACHES)) rmSync(join(dir, file), {force: true})
  } catch {
    // A cache is an optimisation: an unwritable home or a full disk must not fail the command.
  }
}

/** A bundle's text, as built (first line "// podctl-bundle <id>"), and where it lives. */
export interface BundleSource {
  source: string
  /** Stack traces name it; `require` of the optional externals resolves from here. */
  filename: string
}

export interface LaunchOptions {
  /** Reads a bundle by its name (FULL_BUNDLE, QUICK_BUNDLE); undefined when there is none. */
  readBundle: (name: string) => BundleSource | undefined
  /** Reads a cache shipped with the bundles, header included, by its name (shippedCacheName); undefined when there is none. */
  readShippedCache?: (name: string) => Buffer | undefined
  /** oclif's root: the package directory, or the directory of the single executable. */
  root: string
  argv: string[]
  /** The path the process was started as (bin/run.js, bin/crictl, a link to the executable): `crictl` makes podctl crictl. */
  program?: string
  env?: NodeJS.ProcessEnv
  requireFn?: NodeJS.Require
}

/**
 * Runs one podctl invocation the way bin/run.js and the single executable do, then exits: from
 * the quick bundle when the invocation's group is one of QUICK_GROUPS and it holds the command,
 * else from the full one.
 */
export async function launch(options: LaunchOptions): Promise<void> {
  const group = cacheGroup(options.argv)
  const quick = startsQuick(options.argv) ? options.readBundle(QUICK_BUNDLE) : undefined
  if (quick && (await runBundle(quick, group, shippedCacheName(group), options)) !== LEFT_OUT) {
    exitOnceFlushed()
    return
  }

  const full = options.readBundle(FULL_BUNDLE)
  if (!full) throw new Error(`podctl's bundle ${FULL_BUNDLE} is missing: run npm run build`)
  await runBundle(full, group, shippedCacheName(), options)
  exitOnceFlushed()
}

/** Compiles one bundle with the best cache there is for it (see the header) and runs the invocation in it. */
function runBundle(bundleSource: BundleSource, group: string, shippedName: string, options: LaunchOptions): Promise<unknown> {
  const env = options.env ?? process.env
  const found = env.PODCTL_CODE_CACHE === '0' ? undefined : findCache(bundleSource, shippedName, options.readShippedCache, env)
  const bundle = compileBundle(bundleSource.source, bundleSource.filename, found?.cache?.data, options.requireFn)
  const writing = found !== undefined && keepUserCache(found, bundle, group)
  if (env.PODCTL_CODE_CACHE_DEBUG === '1') {
    const report = `${cacheReport(found, bundle, shippedName, group)}${writing ? ', wrote user cache' : ''}`
    const line = `podctl code cache: ${basename(bundleSource.filename)} ${report}\n`
    process.once('exit', () => process.stderr.write(line))
  }

  return bundle.exports.execute(options.argv, options.root, options.program)
}

interface FoundCache {
  id: string
  userCache: {dir: string; name: string}
  cache?: CacheFile
  fromUser: boolean
}

/** The per-user cache of this bundle if there is one, else the shipped one named. */
function findCache(
  bundleSource: BundleSource,
  shippedName: string,
  readShipped: LaunchOptions['readShippedCache'],
  env: NodeJS.ProcessEnv,
): FoundCache {
  const id = bundleId(bundleSource.source)
  const userCache = {dir: userCacheDir(env), name: `${id.slice(0, 16)}-${process.version}-${process.arch}-${flagsKey()}.cache`}
  const user = parseCache(readOptional(join(userCache.dir, userCache.name)), id)
  return {id, userCache, cache: user ?? parseCache(readShipped?.(shippedName), id), fromUser: user !== undefined}
}

/**
 * Writes a per-user cache at exit when there was no usable one, and grows a per-user cache with each
 * command that had not run with it yet; a shipped cache that was taken is left alone. True when it will write.
 */
function keepUserCache({id, userCache, cache, fromUser}: FoundCache, bundle: CompiledBundle, group: string): boolean {
  const grow = fromUser && bundle.cacheAccepted && !cache!.commands.includes(group)
  if (bundle.cacheAccepted && !grow) return false
  const commands = grow ? [...cache!.commands, group] : [group]
  process.once('exit', () => writeCache(userCache.dir, userCache.name, cacheHeader(id, commands), bundle.script.createCachedData()))
  return true
}

/** PODCTL_CODE_CACHE_DEBUG's words: where the cache came from and whether V8 took it. */
function cacheReport(found: FoundCache | undefined, bundle: CompiledBundle, shippedName: string, group: string): string {
  if (!found) return 'none off'
  if (!found.cache) return 'none missing'
  const from = found.fromUser ? 'user' : shippedName === shippedCacheName() ? 'shipped' : `shipped ${group}`
  return `${from} ${bundle.cacheAccepted ? 'accepted' : 'rejected'}`
}

/**
 * Ends the process as soon as the command is done and its output written, like crictl, instead of
 * waiting for the gRPC connection to wind down and for V8 to tear its heap down (exit handlers,
 * such as the cache writer above, still run). Failures already exit through oclif's handler.
 */
function exitOnceFlushed(): void {
  const pending = [process.stdout, process.stderr].filter((stream) => stream.writableLength > 0)
  const exit = () => {
    // eslint-disable-next-line n/no-process-exit, unicorn/no-process-exit -- the command is done; skip the wind-down
    process.exit()
  }

  if (pending.length === 0) {
    exit()
    return
  }

  const drained = pending.map(
    (stream) =>
      new Promise((resolve) => {
        stream.once('drain', resolve)
      }),
  )
  Promise.all(drained).then(exit)
}
