/**
 * Issue 37: the commands people run most start within 1.35x of `node -e 0`, so they must not load
 * what their output does not need. Each hot command runs through bin/run.js (or bin/crictl) against
 * the crictl fixture runtime (test/support/crictl-fixtures.ts: pods, containers and images with
 * their status calls answered) with a `-r` preload that records, at exit, Node's built-in modules the process
 * loaded (process.moduleLoadList) and whether oclif was evaluated (its settings module sets
 * globalThis.oclif). No timing: a module is loaded or it is not, so this cannot flake.
 *
 * While node:http2 carries the CRI calls, what node:http2 loads itself (tls, and with it crypto) is
 * not held against a command that called the runtime unless podctl's code asked for it too; the set
 * is read from a plain `require('node:http2')`, so the day http2 goes, it is held against every command again.
 */
import {spawn, spawnSync} from 'node:child_process'
import {once} from 'node:events'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {crictlFixtures, startCrictlFixtureRuntime} from '../support/crictl-fixtures.js'
import {BIN, endpointEnv, ROOT} from '../support/podctl.js'

/** Built-ins that no hot command needs for what it prints (each was, or could be, loaded at a module's evaluation). */
const FORBIDDEN = [
  'child_process',
  'cluster',
  'crypto',
  'dgram',
  'dns',
  // A socket's stat and crictl.yaml's read go through node:fs: this module is twenty of Node's internal ones.
  'fs/promises',
  'http',
  'https',
  'inspector',
  'perf_hooks',
  'readline',
  'repl',
  'timers/promises',
  'tls',
  'v8',
  'worker_threads',
  'zlib',
]

const work = mkdtempSync(join(tmpdir(), 'podctl-hot-modules-'))
const socket = join(work, 'cri.sock')
const preload = join(work, 'record-modules.cjs')
let stop: () => Promise<void>

/**
 * Records the public built-ins the process loaded (moduleLoadList: "NativeModule crypto", ...), the
 * ones podctl's own code asked for (every require of the bundle goes through Module._load; Node's
 * built-ins loading each other do not), and whether oclif was evaluated.
 */
const PRELOAD = `const Module = require('node:module')
const required = new Set()
const load = Module._load
Module._load = function (request, ...rest) {
  required.add(request.replace(/^node:/, ''))
  return load.call(this, request, ...rest)
}
process.on('exit', () => {
  const names = new Set(Module.builtinModules)
  const loaded = process.moduleLoadList.map((entry) => entry.replace(/^NativeModule /, '')).filter((name) => names.has(name))
  const out = {loaded, required: [...required], oclif: 'oclif' in globalThis}
  require('node:fs').writeFileSync(process.env.PODCTL_TEST_MODULES_OUT, JSON.stringify(out))
})
`

interface Recorded {
  loaded: string[]
  required: string[]
  oclif: boolean
}

/** Runs one command with the preload; resolves with what it loaded once it has exited with `code`. */
async function record(entry: string, args: readonly string[], code: number): Promise<Recorded> {
  const out = join(work, `modules-${Math.random().toString(36).slice(2)}.json`)
  const env = {
    ...process.env,
    ...endpointEnv(`unix://${socket}`, {NO_COLOR: '1', XDG_CACHE_HOME: join(work, 'cache'), PODCTL_TEST_MODULES_OUT: out}),
  }
  for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key]
  const child = spawn(process.execPath, ['-r', preload, entry, ...args], {env, stdio: ['ignore', 'pipe', 'pipe']})
  let stderr = ''
  child.stdout!.resume()
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const [exitCode] = await once(child, 'exit')
  expect(exitCode, `${entry} ${args.join(' ')}: ${stderr}`).toBe(code)
  return JSON.parse(readFileSync(out, 'utf8')) as Recorded
}

/** The built-ins node:http2 loads on its own (beyond a bare Node's). */
function loadedByHttp2(): Set<string> {
  const script = `const before = new Set(process.moduleLoadList); require('node:http2')
const added = process.moduleLoadList.filter((entry) => !before.has(entry))
console.log(JSON.stringify(added.map((entry) => entry.replace(/^NativeModule /, ''))))`
  return new Set(JSON.parse(spawnSync(process.execPath, ['-e', script], {encoding: 'utf8'}).stdout) as string[])
}

const {pods, containers, images} = crictlFixtures()

beforeAll(async () => {
  writeFileSync(preload, PRELOAD)
  stop = await startCrictlFixtureRuntime(socket)
})

afterAll(async () => {
  await stop()
  rmSync(work, {recursive: true, force: true})
})

const CRICTL = join(ROOT, 'bin', 'crictl')
/**
 * code: the exit code the command ends with on the fixture runtime (status: 7, its NetworkReady is
 * false); forbidden: built-ins forbidden to this command beside FORBIDDEN.
 */
const HOT: Array<{name: string; entry: string; args: string[]; code?: number; forbidden?: string[]}> = [
  {name: 'podctl pods', entry: BIN, args: ['pods']},
  {name: 'podctl ps -a', entry: BIN, args: ['ps', '-a']},
  {name: 'podctl images', entry: BIN, args: ['images']},
  {name: 'podctl status', entry: BIN, args: ['status'], code: 7},
  {name: 'podctl version', entry: BIN, args: ['version']},
  {name: 'podctl inspect', entry: BIN, args: ['inspect', containers[0].id]},
  {name: 'podctl inspectp', entry: BIN, args: ['inspectp', pods[0].id]},
  {name: 'podctl inspecti', entry: BIN, args: ['inspecti', images[0].id]},
  {name: 'podctl --help', entry: BIN, args: ['--help']},
  {name: 'crictl pods', entry: CRICTL, args: ['pods']},
  {name: 'crictl ps -a', entry: CRICTL, args: ['ps', '-a']},
  {name: 'crictl images', entry: CRICTL, args: ['images']},
]

describe("hot commands load none of Node's heavy built-ins they do not need", () => {
  it('holds for every hot command (the message names which command loaded which)', async () => {
    const http2Own = loadedByHttp2()
    const offences: string[] = []
    for (const {name, entry, args, code = 0, forbidden = []} of HOT) {
      const {loaded, required, oclif} = await record(entry, args, code)
      const excused = (module: string) => loaded.includes('http2') && http2Own.has(module) && !required.includes(module)
      const bad = [...FORBIDDEN, ...forbidden].filter((module) => loaded.includes(module) && !excused(module))
      if (bad.length > 0) offences.push(`${name} loaded ${bad.join(', ')}`)
      // The crictl personality is crictl's own front end: oclif never runs, so it is never evaluated either.
      if (name.startsWith('crictl') && oclif) offences.push(`${name} evaluated @oclif/core`)
    }

    expect(offences).toEqual([])
  }, 120_000)
})
