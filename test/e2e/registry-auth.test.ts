import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {cleanupNamespace, lab, labClient, labEnv, loginRegistry, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

/**
 * Credentials from a docker config file against the lab registry that requires a login
 * (htpasswd on localhost:5001): what the kubelet's keyring does, end to end through containerd.
 * The config key is the bare "host:port" `docker login` writes; before the fix podctl sent it as
 * AuthConfig.server_address, which containerd 1.6 cannot parse, and every pull was refused (401).
 */
const login = loginRegistry()
const client = labClient()
const work = mkdtempSync(join(tmpdir(), 'podctl-login-'))
const podDirRoot = join(work, 'pods')
const namespaces: string[] = []
const b64 = (text: string) => Buffer.from(text).toString('base64')

/** A DOCKER_CONFIG directory holding one config.json for the login registry. */
function dockerConfig(name: string, user: string, password: string, key = login.registry): string {
  const path = mkdtempSync(join(work, `${name}-`))
  writeFileSync(join(path, 'config.json'), JSON.stringify({auths: {[key]: {auth: b64(`${user}:${password}`)}}}))
  return path
}

function run(args: string[], configDir: string, input?: string) {
  return podctl(args, {
    env: labEnv({HOME: work, DOCKER_CONFIG: configDir, PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot}),
    input,
  })
}

/** Neither the password nor the base64 auth string holding it shows anywhere. */
function expectHidden(result: {stdout: string; stderr: string}, password: string) {
  for (const secret of [password, b64(`${login.user}:${password}`)]) {
    expect(result.stdout).not.toContain(secret)
    expect(result.stderr).not.toContain(secret)
  }
}

afterAll(async () => {
  for (const namespace of namespaces) await cleanupNamespace(client, namespace)
  for (const namespace of namespaces) expect(await sandboxesIn(client, namespace)).toEqual([])
  // The image is not removed: it is the lab's busybox under another name, and RemoveImage removes
  // every tag of an image ID, busybox:1.36 included, from under the test files running beside this one.
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('docker config credentials against a registry that requires a login', () => {
  it('the registry really refuses anonymous pulls (the test would prove nothing otherwise)', async () => {
    const result = await run(['pull', login.busybox], join(work, 'none'))
    expect(result.code).toBe(ExitCode.UNAUTHORIZED)
    expect(result.stderr).toContain(`no credentials found for ${login.registry}`)
  })

  it('podctl pull: a "host:port" key as docker login writes it is used and the pull succeeds', async () => {
    const config = dockerConfig('good', login.user, login.password)
    const human = await run(['pull', login.busybox, '--debug'], config)
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(new RegExp(`^Successfully pulled image "${login.busybox}" in `))
    expectHidden(human, login.password)

    const json = await run(['pull', login.busybox, '-o', 'json'], config)
    expect(json.code).toBe(0)
    const [image] = JSON.parse(json.stdout).images
    expect(image.credentialSource).toBe(`${join(config, 'config.json')} (${login.registry})`)
    expectHidden(json, login.password)
  })

  it('also with an http:// key', async () => {
    const config = dockerConfig('scheme', login.user, login.password, `http://${login.registry}`)
    const result = await run(['pull', login.busybox], config)
    expect(result.code, result.stderr).toBe(0)
    expectHidden(result, login.password)
  })

  it('podctl run: the pod starts from the image behind the login', async () => {
    const config = dockerConfig('run', login.user, login.password)
    const namespace = uniqueNamespace('login')
    namespaces.push(namespace)
    const manifest = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {name: 'private', namespace},
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'app',
            image: login.busybox,
            imagePullPolicy: 'Always',
            command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
          },
        ],
      },
    }
    const dry = await run(['run', '-f', '-', '--dry-run', '-o', 'json'], config, JSON.stringify(manifest))
    expect(dry.code, dry.stderr).toBe(0)
    expectHidden(dry, login.password)

    const result = await run(['run', '-f', '-', '-o', 'json', '--debug'], config, JSON.stringify(manifest))
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).pods[0]).toMatchObject({pod: 'private', namespace, phase: 'Running'})
    expectHidden(result, login.password)

    const killed = await run(['kill', `private_${namespace}`, '--force'], config)
    expect(killed.code, killed.stderr).toBe(0)
  })

  it('a wrong password is Unauthorized (exit 13), names the config file, and shows no secret', async () => {
    const wrong = `${login.password}-wrong`
    const config = dockerConfig('wrong', login.user, wrong)
    for (const args of [
      ['pull', login.busybox],
      ['pull', login.busybox, '-o', 'json', '--debug'],
    ]) {
      const result = await run(args, config)
      expect(result.code).toBe(ExitCode.UNAUTHORIZED)
      expect(result.stderr).toContain(`credentials from ${join(config, 'config.json')} (${login.registry}) were refused`)
      expectHidden(result, wrong)
      expectHidden(result, login.password)
    }
  })
})
