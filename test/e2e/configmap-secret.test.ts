import {execFileSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {cleanupNamespace, lab, labClient, labEnv, loginRegistry, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {fixtureIn, hostMountsUnder} from '../support/objects.js'
import {podctl} from '../support/podctl.js'

/**
 * ConfigMap and Secret documents beside the Pod, as a tutorial's `kubectl apply -f` takes them:
 * what reached the runtime (inspect), what the container sees (exec), that no Secret value is
 * ever printed, and that kill leaves no tmpfs and no pod directory behind.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-objects')
const work = mkdtempSync(join(tmpdir(), 'podctl-objects-'))
const podDirRoot = join(work, 'pods')
const env = labEnv({HOME: work, DOCKER_CONFIG: join(work, 'docker'), PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})
const SECRETS = ['Mzk1MjgkdmRnN0pi', '39528$vdg7Jb', 'tok-7c1b9e2f-not-for-print']

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

function expectNoSecret(result: {stdout: string; stderr: string}, secrets: string[] = SECRETS) {
  for (const secret of secrets) {
    expect(result.stdout).not.toContain(secret)
    expect(result.stderr).not.toContain(secret)
  }
}

async function exec(pod: string, container: string, script: string): Promise<string> {
  const result = await run(['exec', '-n', namespace, `${pod}/${container}`, '--', 'sh', '-c', script])
  expect(result.code, result.stderr).toBe(0)
  return result.stdout
}

/** The container's environment as its first process has it (a shell drops names it cannot hold). */
async function processEnv(pod: string, container: string): Promise<Record<string, string>> {
  const text = await exec(pod, container, String.raw`tr '\0' '\n' < /proc/1/environ`)
  return Object.fromEntries(
    text
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  )
}

async function podUid(name: string): Promise<string> {
  const listed = await run(['pods', '--name', name, '-n', namespace, '-o', 'json'])
  return (JSON.parse(listed.stdout) as {items: Array<{metadata: {uid: string}}>}).items[0].metadata.uid
}

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  // A failed test may leave a tmpfs behind (kill unmounts them); never leave it on the machine.
  for (const point of hostMountsUnder(podDirRoot)) execFileSync('umount', ['-l', point])
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('ConfigMaps in the input', () => {
  it('feed configMapKeyRef, envFrom (prefix, invalid keys skipped) and $(VAR) expansion in the kubelet order', async () => {
    const result = await run(['run', '-f', '-'], fixtureIn('objects/configmap-env.yaml', namespace))
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/Warning\s+InvalidEnvironmentVariableNames .*Keys \[1-bad-name\] from the EnvFrom configMap/)
    const vars = await processEnv('dapi-test-pod', 'test-container')
    expect(vars).toMatchObject({SPECIAL_LEVEL_KEY: 'very', SPECIAL_TYPE: 'charm', CFG_log_level: 'INFO', LOG_LEVEL: 'INFO'})
    expect(vars.GREETING).toBe('level very, type charm')
    expect(vars).not.toHaveProperty('OPTIONAL_MISSING')

    // What reached the runtime, in order: envFrom first, then env; names a shell cannot hold (special.how) too.
    const inspect = await run(['inspect', '-n', namespace, 'dapi-test-pod/test-container'])
    expect(inspect.code, inspect.stderr).toBe(0)
    const runtimeEnv: string[] = JSON.parse(inspect.stdout).info.runtimeSpec.process.env
    expect(runtimeEnv.filter((entry) => !entry.startsWith('PATH=') && !entry.startsWith('HOSTNAME='))).toEqual([
      'special.how=very',
      'SPECIAL_TYPE=charm',
      'CFG_log_level=INFO',
      'SPECIAL_LEVEL_KEY=very',
      'LOG_LEVEL=INFO',
      'GREETING=level very, type charm',
    ])
  })

  it('a missing ConfigMap is refused before anything is created, in the kubelet words', async () => {
    const manifest = fixtureIn('objects/configmap-env.yaml', namespace).replace('  name: special-config\ndata:', '  name: other\ndata:')
    const result = await run(['run', '-f', '-'], manifest.replace('dapi-test-pod', 'missing-config'))
    expect(result.code).toBe(ExitCode.POD_FAILED)
    expect(result.stderr).toContain(
      `pod missing-config_${namespace}: container test-container: CreateContainerConfigError: configmap "special-config" not found`,
    )
    expect((await run(['pods', '-n', namespace, '-o', 'json'])).stdout).not.toContain('missing-config')
  })
})

describe('Secrets in the input', () => {
  it('reach env and a tmpfs volume of 0400 files, and never show in the output', async () => {
    const manifest = fixtureIn('objects/secret.yaml', namespace)
    const dry = await run(['run', '-f', '-', '--dry-run', '-o', 'json'], manifest)
    expect(dry.code, dry.stderr).toBe(0)
    expectNoSecret(dry)
    const plan = JSON.parse(dry.stdout).pods[0]
    expect(plan.volumes[0]).toMatchObject({name: 'secret-volume', type: 'secret', tmpfs: {options: []}, from: ['Secret test-secret']})
    expect(plan.volumes[0].files).toEqual([
      {path: 'api-token', mode: '0400', bytes: 26},
      {path: 'password', mode: '0400', bytes: 12},
      {path: 'username', mode: '0400', bytes: 6},
    ])
    const create = plan.calls.find((call: {rpc: string}) => call.rpc === 'RuntimeService/CreateContainer')
    expect(create.request.config.envs).toContainEqual({key: 'SECRET_PASSWORD', value: '<redacted>'})
    expectNoSecret(await run(['run', '-f', '-', '--dry-run'], manifest))

    const result = await run(['run', '-f', '-', '--debug', '-o', 'json'], manifest)
    expect(result.code, result.stderr).toBe(0)
    expectNoSecret(result)

    const vars = await processEnv('secret-test-pod', 'test-container')
    expect(vars).toMatchObject({SECRET_USERNAME: 'my-app', SECRET_PASSWORD: '39528$vdg7Jb', S_password: '39528$vdg7Jb'})
    // The shell drops S_api-token from what it passes on; the runtime has it, and inspect redacts it.
    const inspect = await run(['inspect', '-n', namespace, 'secret-test-pod/test-container'])
    expect(inspect.code, inspect.stderr).toBe(0)
    expectNoSecret(inspect)
    expect(JSON.parse(inspect.stdout).info.runtimeSpec.process.env).toContain('S_api-token=<redacted>')
    // DB_URL comes before SECRET_PASSWORD: its reference stays as written, as the kubelet leaves it.
    expect(vars.DB_URL).toBe('postgres://my-app:$(SECRET_PASSWORD)@db')

    const listing = await exec(
      'secret-test-pod',
      'test-container',
      'ls -la /etc/secret-volume/ /etc/secret-volume/..data/; cat /etc/secret-volume/password',
    )
    expect(listing).toMatch(/^drwxrwxrwt .* \.$/m)
    expect(listing).toMatch(/ \.\.data -> \.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$/m)
    expect(listing).toMatch(/ password -> \.\.data\/password$/m)
    expect(listing).toMatch(/^-r-------- .* password$/m)
    expect(listing.endsWith('39528$vdg7Jb')).toBe(true)
    expect(await exec('secret-test-pod', 'test-container', 'grep " /etc/secret-volume " /proc/mounts')).toMatch(
      /^tmpfs \/etc\/secret-volume tmpfs ro/,
    )
    // The secret volume, and the pod's own record of its objects (for a later sync): both tmpfs, nothing on disk.
    const uid = await podUid('secret-test-pod')
    const mounts = hostMountsUnder(join(podDirRoot, uid))
    expect(mounts).toHaveLength(2)
    expect(mounts.filter((point) => point.endsWith('/objects'))).toHaveLength(1)
    expect(readFileSync(join(podDirRoot, uid, 'pod.json'), 'utf8')).not.toContain('39528')
    expect(statSync(join(podDirRoot, uid, 'objects', 'objects.json')).mode & 0o777).toBe(0o600)
  })

  it('kill unmounts the tmpfs and removes the pod directory', async () => {
    const uid = await podUid('secret-test-pod')
    const result = await run(['kill', '-n', namespace, 'secret-test-pod', '--grace-period', '0'])
    expect(result.code, result.stderr).toBe(0)
    expect(hostMountsUnder(join(podDirRoot, uid))).toEqual([])
    expect(existsSync(join(podDirRoot, uid))).toBe(false)
    const left = existsSync(podDirRoot) ? readdirSync(podDirRoot).filter((entry) => !entry.startsWith('.')) : []
    for (const entry of left) expect(existsSync(join(podDirRoot, entry, 'volumes', 'kubernetes.io~secret'))).toBe(false)
  })

  it('sync recreates a dead pod with the env its Secret and ConfigMap gave it, from the record run kept', async () => {
    const manifest = `apiVersion: v1
kind: Secret
metadata: {name: sync-secret, namespace: ${namespace}}
stringData: {password: s3cr3t-for-sync}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: sync-config, namespace: ${namespace}}
data: {level: debug}
---
apiVersion: v1
kind: Pod
metadata: {name: secret-sync-pod, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: c
    image: ${lab().busybox}
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
    env:
    - {name: PASSWORD, valueFrom: {secretKeyRef: {name: sync-secret, key: password}}}
    - {name: LEVEL, valueFrom: {configMapKeyRef: {name: sync-config, key: level}}}
`
    expect((await run(['run', '-f', '-', '--settle', '0'], manifest)).code).toBe(0)
    const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.name': 'secret-sync-pod'}}})
    await client.runtime('stopPodSandbox', {podSandboxId: items[0].id})
    const sync = await run(['sync', 'secret-sync-pod', '-n', namespace])
    expect(sync.code, sync.stderr).toBe(0)
    expectNoSecret(sync, ['s3cr3t-for-sync'])
    const pods = JSON.parse((await run(['pods', '--name', 'secret-sync-pod', '-n', namespace, '-o', 'json'])).stdout)
    expect(pods.items.map((pod: {metadata: {attempt: number}}) => pod.metadata.attempt)).toContain(1)
    expect(await processEnv('secret-sync-pod', 'c')).toMatchObject({PASSWORD: 's3cr3t-for-sync', LEVEL: 'debug'})
    expect((await run(['kill', 'secret-sync-pod', '-n', namespace])).code).toBe(0)
  })

  it('a missing Secret key is refused up front, naming the key and never a value', async () => {
    const manifest = fixtureIn('objects/secret.yaml', namespace)
      .replace('key: password', 'key: pasword')
      .replace('secret-test-pod', 'bad-key')
    const result = await run(['run', '-f', '-'], manifest)
    expect(result.code).toBe(ExitCode.POD_FAILED)
    expect(result.stderr).toContain(`CreateContainerConfigError: couldn't find key pasword in Secret ${namespace}/test-secret`)
    expectNoSecret(result)
  })

  it('a Secret value that is not base64 is refused without echoing it', async () => {
    const manifest = fixtureIn('objects/secret.yaml', namespace).replace('password: Mzk1MjgkdmRnN0pi', 'password: "not base64!"')
    const result = await run(['run', '-f', '-', '--dry-run'], manifest)
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toContain('data.password is not valid base64 (put plain text under stringData instead)')
    expect(result.stderr).not.toContain('not base64!')
  })
})

describe('imagePullSecrets', () => {
  const login = loginRegistry()
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  const manifest = (withSecret: boolean, name: string) => `apiVersion: v1
kind: Secret
metadata: {name: regcred, namespace: ${namespace}}
type: kubernetes.io/dockerconfigjson
data:
  .dockerconfigjson: ${b64(JSON.stringify({auths: {[login.registry]: {auth: b64(`${login.user}:${login.password}`)}}}))}
---
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  restartPolicy: Never
  containers:
  - {name: app, image: ${login.busybox}, imagePullPolicy: Always, command: [sh, -c, 'echo pulled']}
${withSecret ? '  imagePullSecrets: [{name: regcred}]\n' : ''}`

  it('a dockerconfigjson Secret of the input logs the pull in; without it the registry refuses', async () => {
    const refused = await run(['run', '-f', '-', '--rm', '--timeout', '20s'], manifest(false, 'no-pull-secret'))
    expect(refused.code).toBe(ExitCode.UNAUTHORIZED)

    const result = await run(['run', '-f', '-', '--rm', '--debug'], manifest(true, 'private-reg'))
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`Successfully pulled image "${login.busybox}"`)
    expectNoSecret(result, [login.password, b64(`${login.user}:${login.password}`)])
  })
})
