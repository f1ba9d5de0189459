import {execFile} from 'node:child_process'
import {mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {promisify} from 'node:util'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {pullBusybox} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl, ROOT} from '../support/podctl.js'

/**
 * Issue 24's definition of done: a project outside the repo installs the packed tarball, imports
 * {connect} from 'podctl' with types under tsc --strict, runs a pod with wait: 'ready', execs, reads
 * logs and disposes of the pod; nothing is left in the runtime, also when its code throws midway.
 */
const run = promisify(execFile)
const client = labClient()
const work = mkdtempSync(join(tmpdir(), 'podctl-library-consumer-'))
const consumer = join(work, 'consumer')
const podDirRoot = join(work, 'pods')
const namespaces = {passing: uniqueNamespace('lib-ok'), failing: uniqueNamespace('lib-fail')}

// The consumer's test, as a user writes it: `await using` kills the pod and closes the connection however it ends.
const CONSUMER_SOURCE = `
import {connect, PodctlError, type ExecResult, type Pod, type Runtime} from 'podctl'

const namespace = process.env.CONSUMER_NAMESPACE ?? 'default'
const manifest = \`
apiVersion: v1
kind: Pod
metadata: {name: smoke, namespace: \${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: \${process.env.CONSUMER_IMAGE}
    command: [sh, -c, 'echo starting; touch /tmp/ready; echo up >&2; exec sleep 3600']
    readinessProbe:
      exec: {command: [cat, /tmp/ready]}
      periodSeconds: 1
\`

// Never called: the types are real, not any (tsc --strict must refuse these).
export function typesAreChecked(runtime: Runtime): void {
  // @ts-expect-error wait is running, ready, completed or none
  void runtime.run(manifest, {wait: 'soon'})
  // @ts-expect-error exec takes the command as an argv array
  void runtime.runPod(manifest).then((pod) => pod.container().exec('ls'))
}

await using runtime = await connect()
const bad = await runtime.runPod('apiVersion: v1\\nkind: Pod\\nmetadata: {name: broken}\\n').then(
  () => undefined,
  (error: unknown) => (error instanceof PodctlError ? {code: error.code, exitCode: error.exitCode} : {thrown: String(error)}),
)
await using pod: Pod = await runtime.runPod(manifest, {wait: 'ready'})
const exec: ExecResult = await pod.container('app').exec(['sh', '-c', 'echo out; echo err >&2; exit 3'])
if (process.env.CONSUMER_FAIL === '1') throw new Error('the consumer test failed midway')
// The two streams' lines are in the order the runtime timed them: sorted, so the check does not depend on it.
const logs = (await pod.container().logs()).map(({stream, text}) => \`\${stream}: \${text}\`).sort()
const status = await pod.status()
console.log(JSON.stringify({bad, exec, logs, phase: status.phase, ready: status.ready}))
`

// A CommonJS consumer (Jest's default, older suites): \`import = require\` takes package.json's "require" export and its types.
const CJS_CONSUMER_SOURCE = `
import podctl = require('podctl')

async function main(): Promise<void> {
  const runtime: podctl.Runtime = await podctl.connect()
  try {
    const bad = await runtime.runPod('{apiVersion: v1, kind: Pod, metadata: {name: broken}}').then(
      () => undefined,
      (error: unknown) => (error instanceof podctl.PodctlError ? {code: error.code, exitCode: error.exitCode} : {thrown: String(error)}),
    )
    console.log(JSON.stringify({connect: typeof podctl.connect, endpoint: runtime.endpoint.startsWith('unix://'), bad}))
  } finally {
    runtime.close()
  }
}

void main()
`

// Records every module the import loads (Node's loader hooks), to show that `import 'podctl'` starts no CLI.
const RECORD_LOADS = `
import {register} from 'node:module'
register('data:text/javascript,' + encodeURIComponent(
  'export async function load(url, context, next) { process.stderr.write("loaded " + url + "\\\\n"); return next(url, context) }'))
`

const CONSUMER_TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022', 'ESNext.Disposable'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    strict: true,
    outDir: 'dist',
  },
  files: ['smoke.ts', 'smoke-cjs.cts'],
}

function consumerRun(namespace: string, extra: Record<string, string> = {}) {
  return podctl([], {
    entry: join(consumer, 'dist', 'smoke.js'),
    env: labEnv({
      PODCTL_POD_LOGS_ROOT: lab().logRoot,
      PODCTL_POD_DIR_ROOT: podDirRoot,
      CONSUMER_NAMESPACE: namespace,
      CONSUMER_IMAGE: lab().busybox,
      ...extra,
    }),
  })
}

/** What is left under the pod directory root: pod directories, and held locks (the lock directory itself stays, as after the CLI). */
function podDirectoriesLeft(): string[] {
  const entries = readdirSync(podDirRoot).filter((name) => name !== '.locks')
  return [...entries, ...readdirSync(join(podDirRoot, '.locks')).map((name) => `.locks/${name}`)]
}

/** The pod's log directories (<namespace>_<name>_<uid>) still under the lab's log root. */
function logDirectoriesOf(namespace: string): string[] {
  return readdirSync(lab().logRoot).filter((name) => name.startsWith(`${namespace}_`))
}

beforeAll(async () => {
  await pullBusybox(client)
  // The tarball users get from npm (npm pack of the built package), installed by a project of its own.
  const {stdout} = await run('npm', ['pack', '--json', '--pack-destination', work], {cwd: ROOT, maxBuffer: 64 * 1024 * 1024})
  const [{filename}] = JSON.parse(stdout) as Array<{filename: string}>
  mkdirSync(consumer)
  const manifest = {name: 'consumer', private: true, type: 'module', dependencies: {podctl: `file:${join(work, filename)}`}}
  writeFileSync(join(consumer, 'package.json'), JSON.stringify(manifest, null, 2))
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(CONSUMER_TSCONFIG, null, 2))
  writeFileSync(join(consumer, 'smoke.ts'), CONSUMER_SOURCE)
  writeFileSync(join(consumer, 'smoke-cjs.cts'), CJS_CONSUMER_SOURCE)
  writeFileSync(join(consumer, 'record-loads.mjs'), RECORD_LOADS)
  await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], {cwd: consumer, timeout: 240_000})
  await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', consumer])
}, 300_000)

afterAll(async () => {
  for (const namespace of Object.values(namespaces)) await cleanupNamespace(client, namespace)
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('podctl as a library in a project of its own', () => {
  it('runs a pod until ready, execs, reads its logs and disposes of it; nothing is left', async () => {
    const result = await consumerRun(namespaces.passing)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({
      bad: {code: 'InvalidManifest', exitCode: 2},
      exec: {exitCode: 3, stdout: 'out\n', stderr: 'err\n'},
      logs: ['stderr: up', 'stdout: starting'],
      phase: 'Running',
      ready: true,
    })
    expect(await sandboxesIn(client, namespaces.passing)).toEqual([])
    expect(podDirectoriesLeft()).toEqual([])
    expect(logDirectoriesOf(namespaces.passing)).toEqual([])
  })

  it("loads none of the CLI's modules (oclif, chalk, cli-table3, ora) with the API", async () => {
    const script = "const api = await import('podctl'); console.log(Object.keys(api).includes('connect'))"
    const {stdout, stderr} = await run(process.execPath, ['--import', './record-loads.mjs', '--input-type=module', '-e', script], {
      cwd: consumer,
    })
    expect(stdout).toBe('true\n')
    const loaded = stderr.split('\n').filter((line) => line.startsWith('loaded '))
    expect(loaded.some((line) => line.includes('/node_modules/podctl/dist/lib/api/index.js'))).toBe(true)
    const cli = loaded.filter((line) =>
      /\/node_modules\/(@oclif\/core|chalk|cli-table3|ora)\/|\/podctl\/dist\/(commands|lib\/output)\//.test(line),
    )
    expect(cli).toEqual([])
  })

  it("is required from CommonJS, types and all: require('podctl').connect is a function", async () => {
    const {stdout} = await run(process.execPath, ['-e', "console.log(typeof require('podctl').connect)"], {cwd: consumer})
    expect(stdout).toBe('function\n')
    const result = await run(process.execPath, [join(consumer, 'dist', 'smoke-cjs.cjs')], {cwd: consumer, env: labEnv({})})
    expect(result.stderr).toBe('')
    expect(JSON.parse(result.stdout)).toEqual({connect: 'function', endpoint: true, bad: {code: 'InvalidManifest', exitCode: 2}})
  })

  it('leaves nothing either when the consumer throws midway', async () => {
    const result = await consumerRun(namespaces.failing, {CONSUMER_FAIL: '1'})
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('Error: the consumer test failed midway')
    expect(result.stdout).toBe('')
    expect(await sandboxesIn(client, namespaces.failing)).toEqual([])
    expect(podDirectoriesLeft()).toEqual([])
    expect(logDirectoriesOf(namespaces.failing)).toEqual([])
  })
})
