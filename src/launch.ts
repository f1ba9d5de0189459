/**
 * Starts podctl from its one-file bundle (dist/bundle/podctl.cjs, built by scripts/bundle/) with a
 * V8 code cache, so that a start costs about what a plain grpc-js script costs: no module
 * resolution, no file reads beyond two, and no compiling of the functions the cache holds.
 * Used by bin/run.js, by the single executable's launcher and by the build's cache training.
 *
 * Caches, in the order tried:
 *   1. the per-user cache, ~/.cache/podctl/ (XDG_CACHE_HOME), written when 2 and 3 were missing or
 *      rejected (another Node version, V8 flags) and keyed by bundle, Node version, arch and flags;
 *   2. the cache shipped for the invocation's group (cacheGroup: pods, ps, status, help, …),
 *      trained at build time by running only that group's commands;
 *   3. the cache shipped for everything else, trained on all the common commands.
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
import {dirname, join} from 'node:path'
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

/**
 * The group of commands whose shipped cache fits this invocation: `help` for help and `--version`
 * in any spelling, else the command's name (the first word that is not a flag or a global flag's
 * value). Only a hint: any cache of the same bundle is correct, a better fitting one is smaller.
 */
export function cacheGroup(argv: readonly string[]): string {
  let command: string | undefined
  for (let i = 0; i < argv.length && argv[i] !== '--'; i++) {
    const token = argv[i]
    if (token === '--help' || token === '-h') return 'help'
    if (token.startsWith('-')) {
      if (command === undefined && GLOBAL_VALUE_FLAGS.has(token)) i++
      continue
    }

    command ??= token
  }

  if (command === undefined || command === 'help' || command === 'h') return 'help'
  return /^[a-z][a-z-]*$/.test(command) ? command : 'other'
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

export interface LaunchOptions {
  /** The bundle's text, as built (first line "// podctl-bundle <id>"). */
  source: string
  /** Where the bundle lives (stack traces; `require` of the optional externals resolves from here). */
  filename: string
  /** Reads a cache shipped with the bundle, header included, by its name (shippedCacheName); undefined when there is none. */
  readShippedCache?: (name: string) => Buffer | undefined
  /** oclif's root: the package directory, or the directory of the single executable. */
  root: string
  argv: string[]
  /** The path the process was started as (bin/run.js, bin/crictl, a link to the executable): `crictl` makes podctl crictl. */
  program?: string
  env?: NodeJS.ProcessEnv
  requireFn?: NodeJS.Require
}

/** Runs one podctl invocation from the bundle, the way bin/run.js and the single executable do, then exits. */
export function launch(options: LaunchOptions): Promise<void> {
  const env = options.env ?? process.env
  const useCache = env.PODCTL_CODE_CACHE !== '0'
  const group = cacheGroup(options.argv)
  let id: string | undefined
  let userCache: {dir: string; name: string} | undefined
  let cache: CacheFile | undefined
  let fromUser = false
  let shippedGroup: string | undefined
  if (useCache) {
    id = bundleId(options.source)
    userCache = {dir: userCacheDir(env), name: `${id.slice(0, 16)}-${process.version}-${process.arch}-${flagsKey()}.cache`}
    cache = parseCache(readOptional(join(userCache.dir, userCache.name)), id)
    fromUser = cache !== undefined
    const read = options.readShippedCache
    if (!cache && read) {
      cache = parseCache(read(shippedCacheName(group)), id)
      shippedGroup = cache ? group : undefined
      cache ??= parseCache(read(shippedCacheName()), id)
    }
  }

  const bundle = compileBundle(options.source, options.filename, cache?.data, options.requireFn)
  let writing = false
  if (useCache && id && userCache) {
    // Write a per-user cache when there was no usable one, and grow a per-user cache with each
    // command that had not run with it yet; a shipped cache that was taken is left alone.
    const grow = fromUser && bundle.cacheAccepted && !cache!.commands.includes(group)
    if (!bundle.cacheAccepted || grow) {
      writing = true
      const commands = grow ? [...cache!.commands, group] : [group]
      const {dir, name} = userCache
      process.once('exit', () => writeCache(dir, name, cacheHeader(id!, commands), bundle.script.createCachedData()))
    }
  }

  if (env.PODCTL_CODE_CACHE_DEBUG === '1') {
    const from = cache ? (fromUser ? 'user' : shippedGroup ? `shipped ${shippedGroup}` : 'shipped') : 'none'
    const state = cache ? (bundle.cacheAccepted ? 'accepted' : 'rejected') : useCache ? 'missing' : 'off'
    process.once('exit', () => process.stderr.write(`podctl code cache: ${from} ${state}${writing ? ', wrote user cache' : ''}\n`))
  }

  return bundle.exports.execute(options.argv, options.root, options.program).then(exitOnceFlushed)
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
