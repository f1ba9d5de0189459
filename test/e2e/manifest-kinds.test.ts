import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

/**
 * A real project's manifest: a controller's deploy.yaml runs its Deployment's pod and names every
 * other object in one line (--strict refuses them); fields of newer Kubernetes versions are
 * dropped with one warning; env fileKeyRef reads a file an init container wrote.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-kinds')
const work = mkdtempSync(join(tmpdir(), 'podctl-kinds-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods')})
const DEPLOY = readFileSync(new URL('../fixtures/kinds/deploy.yaml', import.meta.url), 'utf8')
  .replaceAll('NAMESPACE', namespace)
  .replaceAll('localhost:5000/podctl/busybox:1.36', lab().busybox)

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

async function podNames(): Promise<string[]> {
  const result = await run(['pods', '-n', namespace, '-o', 'json'])
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout).items.map((item: {metadata: {name: string}}) => item.metadata.name)
}

const envFilePod = (key: string, name = 'env-file') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
spec:
  terminationGracePeriodSeconds: 1
  volumes:
  - name: config
    emptyDir: {}
  initContainers:
  - name: setup
    image: ${lab().busybox}
    command: [sh, -c, 'echo DB_HOST=db.local > /data/config.env']
    volumeMounts: [{name: config, mountPath: /data}]
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, '3600']
    env:
    - name: DB_HOST
      valueFrom:
        fileKeyRef: {volumeName: config, path: config.env, key: ${key}}
`

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe("a controller's deploy.yaml", () => {
  it('runs its pod and names the objects not run in one summary line', async () => {
    const result = await run(['run', '-f', '-', '-o', 'json'], DEPLOY)
    expect(result.code, result.stderr).toBe(0)
    const summary = result.stderr.split('\n').filter((line) => line.includes('not run on one node'))
    expect(summary).toHaveLength(1)
    expect(summary[0]).toContain(`Namespace/${namespace}, ServiceAccount/${namespace}/demo-controller, ClusterRole/demo-controller`)
    expect(summary[0]).toContain(`Service/${namespace}/demo-controller, PodDisruptionBudget/${namespace}/demo-controller`)
    expect(summary[0]).toContain(`DemoPolicy/${namespace}/default; --strict refuses them`)
    expect(result.stderr).not.toContain('is not supported')
    const [{pod}] = JSON.parse(result.stdout).pods
    expect(pod).toMatch(/^demo-controller-/)
    const logs = await run(['logs', '-n', namespace, `${pod}/controller`])
    expect(logs.stdout).toBe('log-level=info\n')
    expect((await run(['kill', '-n', namespace, pod, '--grace-period', '0'])).code).toBe(0)
  })

  it('with replicas: 2 runs both replicas beside the objects it skips, and kill -f removes both', async () => {
    const file = join(work, 'deploy-2.yaml')
    writeFileSync(file, DEPLOY.replace('replicas: 1', 'replicas: 2'))
    const result = await run(['run', '-f', file, '-o', 'json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr.split('\n').filter((line) => line.includes('not run on one node'))).toHaveLength(1)
    const pods = JSON.parse(result.stdout).pods.map(({pod}: {pod: string}) => pod)
    expect(pods).toHaveLength(2)
    expect((await podNames()).sort()).toEqual([...pods].sort())
    const kill = await run(['kill', '-f', file, '--grace-period', '0'])
    expect(kill.code, kill.stderr).toBe(0)
    expect(await podNames()).toEqual([])
  })

  it('--strict refuses them with exit 2, listing them all, before anything is created', async () => {
    const result = await run(['run', '-f', '-', '--strict'], DEPLOY)
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toContain('--strict refuses 11 objects podctl does not run on one node')
    expect(result.stderr).toContain(`<stdin> (document 9): Service/${namespace}/demo-controller`)
    expect(result.stderr).toContain(`<stdin> (document 14): DemoPolicy/${namespace}/default`)
    expect(await podNames()).toEqual([])
  })
})

describe('fields of newer Kubernetes versions', () => {
  it('gated fields of releases up to 1.36 are dropped with one warning line; a field of none is refused, nothing run', async () => {
    const manifest = `apiVersion: v1
kind: Pod
metadata: {name: newer, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  schedulingGroup: {podGroupName: gang}
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, '3600']
    lifecycle:
      stopSignal: SIGUSR1
`
    const result = await run(['run', '-f', '-'], manifest)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(
      "dropped (not known to podctl's Kubernetes version, as an API server without the feature gate drops them): " +
        'spec.schedulingGroup, spec.containers[0].lifecycle.stopSignal; --strict refuses them',
    )
    expect(result.stderr).not.toContain('not a known field')
    expect((await run(['kill', '-n', namespace, 'newer', '--grace-period', '0'])).code).toBe(0)
    const strict = await run(['run', '-f', '-', '--strict'], manifest)
    expect(strict.code).toBe(ExitCode.USAGE)
    expect(strict.stderr).toContain("spec.containers[0].lifecycle.stopSignal is not known to podctl's Kubernetes version")
    // As kubectl apply (strict field validation): a field of no release, by path, with a did-you-mean.
    const typo = await run(['run', '-f', '-'], manifest.replace('    command:', '    imagePolicy: Always\n    command:'))
    expect(typo.code).toBe(ExitCode.USAGE)
    expect(typo.stderr).toBe('Error: <stdin>: spec.containers[0].imagePolicy is not a known field; did you mean imagePullPolicy?\n')
    expect(await podNames()).toEqual([])
  })
})

describe('env fileKeyRef', () => {
  it('takes the value from the file the init container wrote', async () => {
    const dry = await run(['run', '-f', '-', '--dry-run'], envFilePod('DB_HOST'))
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain('value: <key DB_HOST of config.env in volume config, read at start>')
    const result = await run(['run', '-f', '-'], envFilePod('DB_HOST'))
    expect(result.code, result.stderr).toBe(0)
    // The lab's busybox has no printenv applet: the shell prints the variable instead.
    const printed = await run(['exec', 'env-file/app', '-n', namespace, '--', 'sh', '-c', 'echo "$DB_HOST"'])
    expect(printed.code, printed.stderr).toBe(0)
    expect(printed.stdout).toBe('db.local\n')
    expect((await run(['kill', '-n', namespace, 'env-file', '--grace-period', '0'])).code).toBe(0)
  })

  it('a missing key fails the run with CreateContainerConfigError and leaves nothing behind', async () => {
    const result = await run(['run', '-f', '-'], envFilePod('DB_PORT', 'env-file-missing'))
    expect(result.code, result.stderr).toBe(ExitCode.POD_FAILED)
    expect(result.stderr).toContain('CreateContainerConfigError')
    expect(result.stderr).toContain('couldn\'t find key DB_PORT in env file "config.env" in volume "config"')
    expect(await podNames()).not.toContain('env-file-missing')
    // The earlier pods were killed: no sandbox and no pod directory is left.
    expect(await sandboxesIn(client, namespace)).toEqual([])
    expect(existsSync(join(work, 'pods')) ? readdirSync(join(work, 'pods')).filter((name) => name !== '.locks') : []).toEqual([])
  })
})
