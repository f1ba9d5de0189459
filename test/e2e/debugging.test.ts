/**
 * Node debugging from the host side (issue 35) on a distroless pod: the lab's static app (one static
 * binary, no shell, no tar, no id), the case crictl cannot help with. Runs on every runtime of the lab.
 */
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
      stderr: `Error: --user ghost: no such user in /etc/passwd of container main (${main.slice(0, 12)}); give a numeric UID instead\n`,
    })
    const workdir = await podctl(['exec', '-w', '/nowhere', main, '--', '/app', 'pwd'], {env})
    expect(workdir).toMatchObject({code: 2, stderr: `Error: -w /nowhere: no such directory in container main (${main.slice(0, 12)})\n`})
    const word = await podctl(['exec', '-e', 'FOO', main, '--', '/app', 'pwd'], {env})
    expect(word).toMatchObject({code: 2, stderr: 'Error: -e "FOO": expected NAME=VALUE\n'})
  })
})
