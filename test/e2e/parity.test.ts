import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, createSandbox, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {BIN, podctl, ROOT, type RunResult} from '../support/podctl.js'
import {nodeFixtures, startFixtureRuntime, trainingRuns} from '../support/training.js'

/**
 * The bundle (bin/run.js: one file, oclif's root plugin built from the embedded package.json and
 * manifest, oclif patched) must behave exactly like the unbundled ESM path (bin/dev.js), and the
 * single executable like both: same stdout, stderr and exit code for the same invocation.
 */
const BUNDLE = join(ROOT, 'dist', 'bundle', 'podctl.cjs')
const BINARY = join(ROOT, `podctl-linux-${process.arch}`)
const DEV = join(ROOT, 'bin', 'dev.js')

const work = mkdtempSync(join(tmpdir(), 'podctl-parity-'))
const socket = join(work, 'cri.sock')
const crictlConfig = join(work, 'crictl.yaml')
// Nothing from the developer's machine: no crictl config, no runtime from the environment, caches in
// here. NODE_ENV=production: bin/dev.js otherwise runs in oclif's development mode (full stacks).
const env = {
  NODE_ENV: 'production',
  CRI_CONFIG_FILE: crictlConfig,
  CONTAINER_RUNTIME_ENDPOINT: undefined,
  IMAGE_SERVICE_ENDPOINT: undefined,
  XDG_CACHE_HOME: work,
}
const client = labClient()
const ns = uniqueNamespace('parity')
let stop: () => Promise<void>
let podId: string

/** The binary, when one was built from the current bundle (a stale one is reported, not compared). */
function currentBinary(): string | undefined {
  if (!existsSync(BINARY)) return undefined
  const id = /^\/\/ podctl-bundle ([0-9a-f]+)/.exec(readFileSync(BUNDLE, 'latin1').slice(0, 64))?.[1]
  if (id && readFileSync(BINARY).includes(`// podctl-bundle ${id}`)) return BINARY
  console.warn(`${BINARY} was built from another bundle; not compared (npm run build:binary)`)
  return undefined
}

let binary: string | undefined

beforeAll(async () => {
  expect(existsSync(BUNDLE), 'npm run build makes dist/bundle/podctl.cjs').toBe(true)
  binary = currentBinary()
  writeFileSync(crictlConfig, '')
  stop = await startFixtureRuntime(socket)
  podId = await createSandbox(client, {name: 'web', namespace: ns, labels: {app: 'web'}})
})

afterAll(async () => {
  await stop?.()
  await cleanupNamespace(client, ns)
  expect(await sandboxesIn(client, ns)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

/** stdout as text, or parsed when it is JSON from a real runtime (containerd answers maps in random order). */
const shown = (result: RunResult, json: boolean) => ({
  code: result.code,
  stdout: json ? JSON.parse(result.stdout) : result.stdout,
  stderr: result.stderr,
})

/** Runs one invocation through every entry and expects the same result from each. */
async function expectParity(args: string[], extraEnv: Record<string, string | undefined> = {}, json = false): Promise<RunResult> {
  const options = {env: {...env, ...extraEnv}}
  const entries = [DEV, BIN, ...(binary ? [binary] : [])]
  const [dev, ...others] = await Promise.all(entries.map((entry) => podctl(args, {...options, entry})))
  for (const [i, other] of others.entries()) {
    expect(shown(other, json), `podctl ${args.join(' ')} through ${entries[i + 1]} differs from bin/dev.js`).toEqual(shown(dev, json))
  }

  return dev
}

const r = () => ['-r', `unix://${socket}`]

describe('bin/run.js (bundle) and the binary behave like bin/dev.js (unbundled)', () => {
  it('for every invocation the code cache is trained on', async () => {
    for (const args of trainingRuns(socket)) await expectParity(args)
  })

  it('for more output formats and commands against a fixed fake node', async () => {
    const {pods, containers} = nodeFixtures()
    const results = []
    for (const args of [
      ['pods', ...r(), '-o', 'yaml'],
      ['pods', ...r(), '--json', '-n', 'default', '--name', 'web-*'],
      [...r(), 'ps', '-a', '-o', 'wide'],
      ['images', ...r(), '--digests', '--pinned', '-o', 'json'],
      ['inspect', pods[0].id.slice(0, 12), ...r()],
      ['inspect', containers[1].id.slice(0, 12), ...r(), '-o', 'yaml'],
      ['info', ...r()],
      ['version', ...r(), '-o', 'jsonpath={.runtime.runtimeVersion}'],
      ['completion', 'bash'],
      ['completion', 'zsh'],
    ]) {
      results.push(await expectParity(args))
    }

    expect(results.filter((result) => result.code === 0).length).toBeGreaterThan(8)
  })

  it("for every command's help, read from the manifest (commands added later are covered too)", async () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, unknown>}
    const ids = Object.keys(manifest.commands)
    expect(ids.length).toBeGreaterThan(10)
    for (const id of ids) await expectParity([...id.split(':'), '--help'])
    await expectParity(['help', 'pods'])
    // Two or three starts per command, ~50 commands: 2.6 s a command on a 2-core machine under a CPU hog.
  }, 400_000)

  it('for failures: unknown command, bad flags and arguments, unreachable runtime, JSON errors', async () => {
    for (const args of [
      ['bogus'],
      ['pods', 'extra'],
      ['pods', ...r(), '-o', 'bogus'],
      ['pods', ...r(), '--timeout', 'soon'],
      ['logs'],
      ['run', join(work, 'missing.yaml')],
      ['pods', '-r', `unix://${join(work, 'missing.sock')}`, '--json'],
      ['inspect', 'nosuchthing', ...r()],
    ]) {
      const result = await expectParity(args)
      expect(result.code, `podctl ${args.join(' ')}`).not.toBe(0)
    }
  })

  it('against the lab runtime, for a pod this test made', async () => {
    const lab = labEnv()
    for (const args of [
      ['pods', '-n', ns, '-o', 'json'],
      ['inspect', podId, '-o', 'json'],
      ['status', 'web', '-n', ns, '-o', 'json'],
    ]) {
      const result = await expectParity(args, {CONTAINER_RUNTIME_ENDPOINT: lab.CONTAINER_RUNTIME_ENDPOINT}, true)
      expect(result.code, `podctl ${args.join(' ')}: ${result.stderr}`).toBe(0)
      expect(result.stdout).toContain(podId)
    }
  })
})

describe("oclif's debug logging in the bundle", () => {
  it('prints nothing without DEBUG, and with DEBUG=oclif* the namespaces bin/dev.js prints', async () => {
    const quiet = await podctl(['--version'], {env})
    expect(quiet.stderr).toBe('')
    // Lines are "<time> oclif:<namespace> <message>"; times differ, and the bundle skips finding and
    // reading package.json (it is embedded), so those namespaces are the dev path's only.
    const namespaces = (stderr: string) => [...new Set(stderr.match(/\boclif(:[\w-]+)*/g) ?? [])].sort()
    const bundled = await podctl(['--version'], {env: {...env, DEBUG: 'oclif*'}})
    const dev = await podctl(['--version'], {entry: DEV, env: {...env, DEBUG: 'oclif*'}})
    expect(bundled.code).toBe(0)
    expect(namespaces(bundled.stderr)).toEqual(expect.arrayContaining(['oclif:config', 'oclif:main']))
    expect(namespaces(dev.stderr)).toEqual(expect.arrayContaining(namespaces(bundled.stderr)))
  })
})

describe('the code cache', () => {
  const cacheDebug = (extraEnv: Record<string, string> = {}) =>
    podctl(['pods', ...r(), '-q'], {env: {...env, PODCTL_CODE_CACHE_DEBUG: '1', ...extraEnv}})

  it('bin/run.js starts the quick bundle with the cache shipped for the command, else the full one with the general cache', async () => {
    const result = await cacheDebug()
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('podctl code cache: podctl.quick.cjs shipped pods accepted\n')
    const help = await podctl(['help', 'ps'], {env: {...env, PODCTL_CODE_CACHE_DEBUG: '1'}})
    expect(help.stderr).toBe('podctl code cache: podctl.quick.cjs shipped help accepted\n')
    // inspect has no cache of its own: the full bundle, with the general cache trained on every common command.
    const other = await podctl(['inspect', 'pod', 'nosuch', ...r()], {env: {...env, PODCTL_CODE_CACHE_DEBUG: '1'}})
    expect(other.stderr.split('\n').at(-2)).toBe('podctl code cache: podctl.cjs shipped accepted')
    // Help on a command the quick bundle does not hold needs that command's class: the full bundle, at once.
    const runHelp = await podctl(['run', '--help'], {env: {...env, PODCTL_CODE_CACHE_DEBUG: '1'}})
    expect(runHelp.stderr).toBe('podctl code cache: podctl.cjs shipped accepted\n')
  })

  it('when the quick bundle was the wrong guess, the full one runs the command line with nothing printed twice', async () => {
    // crictl's --tracing-endpoint takes a value that the launcher (which knows podctl's global flags) reads as
    // the command: it guesses `pods`, and crictl's pull is not in the quick bundle.
    const argv = [...r(), '--tracing-endpoint', 'pods', 'pull', 'nosuch.invalid/x']
    const debug = {...env, PODCTL_CODE_CACHE_DEBUG: '1'}
    const guessed = await podctl(argv, {entry: join(ROOT, 'bin', 'crictl'), env: debug})
    expect(guessed.stderr).toMatch(/^podctl code cache: podctl\.quick\.cjs shipped pods accepted$/m)
    expect(guessed.stderr).toMatch(/^podctl code cache: podctl\.cjs shipped accepted$/m)
    const direct = await podctl([...r(), 'pull', 'nosuch.invalid/x'], {entry: join(ROOT, 'bin', 'crictl'), env})
    const withoutDebug = guessed.stderr.replaceAll(/^podctl code cache: .*\n/gm, '')
    expect({code: guessed.code, stdout: guessed.stdout, stderr: withoutDebug.replaceAll(/time="[^"]*"/g, '')}).toEqual({
      code: direct.code,
      stdout: direct.stdout,
      stderr: direct.stderr.replaceAll(/time="[^"]*"/g, ''),
    })
    expect(direct.code).not.toBe(0)
  })

  it('when V8 rejects the shipped cache, the first start writes a per-user cache and the next one uses it', async () => {
    const cacheHome = mkdtempSync(join(work, 'cache-'))
    // Any V8 flag makes V8 reject a cache made without it, as another Node version would.
    const flagged = {NODE_OPTIONS: '--max-semi-space-size=8', XDG_CACHE_HOME: cacheHome}
    const first = await cacheDebug(flagged)
    expect(first.stderr).toBe('podctl code cache: podctl.quick.cjs shipped pods rejected, wrote user cache\n')
    const second = await cacheDebug(flagged)
    expect(second.stderr).toBe('podctl code cache: podctl.quick.cjs user accepted\n')
    expect(second.stdout).toBe(first.stdout)
  })

  it('PODCTL_CODE_CACHE=0 neither reads nor writes a cache', async () => {
    const cacheHome = mkdtempSync(join(work, 'cache-'))
    const result = await cacheDebug({PODCTL_CODE_CACHE: '0', XDG_CACHE_HOME: cacheHome, NODE_OPTIONS: '--max-semi-space-size=8'})
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('podctl code cache: podctl.quick.cjs none off\n')
    expect(existsSync(join(cacheHome, 'podctl'))).toBe(false)
  })

  it.runIf(existsSync(BINARY))('the single executable starts from its embedded cache', async () => {
    const result = await podctl(['pods', ...r(), '-q'], {entry: BINARY, env: {...env, PODCTL_CODE_CACHE_DEBUG: '1'}})
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('podctl code cache: podctl.quick.cjs shipped pods accepted\n')
  })
})
