/**
 * Node debugging from the host side (issue 35) on a distroless pod: the lab's static app (one static
 * binary, no shell, no tar, no id), the case crictl cannot help with. Runs on every runtime of the lab.
 */
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createPod, removePodLogs, runContainer, type TestPod} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('debugging')
const env = labEnv()
let pod: TestPod
let main: string

beforeAll(async () => {
  await client.image('pullImage', {image: {image: lab().staticApp}})
  pod = await createPod(client, {name: 'app', namespace})
  main = await runContainer(client, pod, {name: 'main', image: lab().staticApp})
}, 120_000)

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

describe('exec --user, -e, -w (entered from the host)', () => {
  it('runs the command as UID:GID', async () => {
    const result = await podctl(['exec', '-n', namespace, '--user', '1234:1234', 'app/main', '--', '/app', 'id'], {env})
    expect(result).toMatchObject({code: 0, stdout: '1234 1234\n', stderr: ''})
  })

  it("looks a name up in the container's own /etc/passwd (the image has no shell to ask)", async () => {
    const result = await podctl(['exec', '--user', 'app', main.slice(0, 12), '--', '/app', 'id'], {env})
    expect(result).toMatchObject({code: 0, stdout: '1234 1234\n', stderr: ''})
    const group = await podctl(['exec', '-u', 'app:staff', main, '--', '/app', 'id'], {env})
    expect(group).toMatchObject({code: 0, stdout: '1234 50\n'})
  })

  it("applies -e over the container's environment and -w as the working directory", async () => {
    const variable = await podctl(['exec', '-e', 'FOO=bar', '-w', '/etc', main, '--', '/app', 'env', 'FOO'], {env})
    expect(variable).toMatchObject({code: 0, stdout: 'bar\n', stderr: ''})
    const inherited = await podctl(['exec', '-e', 'FOO=bar', main, '--', '/app', 'env', 'APP_MODE'], {env})
    expect(inherited).toMatchObject({code: 0, stdout: 'serve\n'})
    const directory = await podctl(['exec', '-e', 'FOO=bar', '-w', '/etc', main, '--', '/app', 'pwd'], {env})
    expect(directory).toMatchObject({code: 0, stdout: '/etc\n'})
    // Without -w: the image's working directory, as the runtime's exec has it.
    expect(await podctl(['exec', '-u', '0', main, '--', '/app', 'pwd'], {env})).toMatchObject({code: 0, stdout: '/data\n'})
  })

  it("passes the command's exit code through", async () => {
    const result = await podctl(['exec', '-u', '1234', main, '--', '/app', 'env', 'UNSET_VARIABLE'], {env})
    expect(result).toMatchObject({code: 1, stdout: ''})
  })

  it('refuses a user, group or directory the container lacks, naming it (exit 2)', async () => {
    expect(await podctl(['exec', '--user', 'ghost', main, '--', '/app', 'id'], {env})).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `Error: --user ghost: no such user in /etc/passwd of container main (${main.slice(0, 13)}); give a numeric UID instead\n`,
    })
    const workdir = await podctl(['exec', '-w', '/nowhere', main, '--', '/app', 'pwd'], {env})
    expect(workdir).toMatchObject({code: 2, stderr: `Error: -w /nowhere: no such directory in container main (${main.slice(0, 13)})\n`})
    const word = await podctl(['exec', '-e', 'FOO', main, '--', '/app', 'pwd'], {env})
    expect(word).toMatchObject({code: 2, stderr: 'Error: -e "FOO": expected NAME=VALUE\n'})
    const detach = await podctl(['exec', '-u', '0', '--detach-keys', 'ctrl-x', main, '--', '/app', 'id'], {env})
    expect(detach).toMatchObject({
      code: 2,
      stderr: 'Error: --detach-keys does not apply with --user, -e or -w (the command runs from the host)\n',
    })
  })
})

describe('top (read from the host)', () => {
  it("lists the static app's process: its pid in the pod's PID namespace and on the host, user and command", async () => {
    const result = await podctl(['top', '-n', namespace, 'app', '-o', 'json'], {env})
    expect(result).toMatchObject({code: 0, stderr: ''})
    const {processes} = JSON.parse(result.stdout) as {processes: Array<Record<string, unknown>>}
    expect(processes).toEqual([
      expect.objectContaining({container: 'main', containerId: main, user: 'root', command: '/app', pid: expect.any(Number)}),
    ])
    // The pause process holds the pod's PID namespace: the app is not its pid 1, and the host sees another pid.
    expect(processes[0].pid).toBeGreaterThan(1)
    expect(processes[0].hostPid).not.toBe(processes[0].pid)
  })
})

describe('cp (through the container root)', () => {
  it('copies a file out of an image without tar, and one in', async () => {
    const local = mkdtempSync(join(tmpdir(), 'podctl-e2e-cp-'))
    const out = await podctl(['cp', '-n', namespace, 'app/main:/data/greeting.txt', join(local, 'greeting.txt')], {env})
    expect(out).toMatchObject({code: 0, stderr: ''})
    expect(readFileSync(join(local, 'greeting.txt'), 'utf8')).toBe('hello from the static app\n')
    writeFileSync(join(local, 'in.txt'), 'FOO=from-cp\n')
    const into = await podctl(['cp', '-n', namespace, join(local, 'in.txt'), 'app:/tmp/in.txt'], {env})
    expect(into).toMatchObject({code: 0, stderr: ''})
    // Read back from inside: the container sees the file (its root is where cp wrote).
    const back = await podctl(['cp', '-n', namespace, 'app/main:/tmp/in.txt', join(local, 'back.txt')], {env})
    expect(back.code).toBe(0)
    expect(readFileSync(join(local, 'back.txt'), 'utf8')).toBe('FOO=from-cp\n')
  })

  it('follows a symlink inside the root and refuses one that leads out (exit 18)', async () => {
    const local = mkdtempSync(join(tmpdir(), 'podctl-e2e-cp-'))
    expect(await podctl(['cp', `${main}:/data/link-inside`, join(local, 'a')], {env})).toMatchObject({code: 0})
    expect(readFileSync(join(local, 'a'), 'utf8')).toBe('hello from the static app\n')
    const outside = await podctl(['cp', `${main}:/data/link-outside`, join(local, 'b')], {env})
    expect(outside).toMatchObject({code: 18, stdout: ''})
    expect(outside.stderr).toContain("is a symlink that leads out of the container's root; podctl does not follow it")
  })
})
