import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ambiguousPrefix, createPod, pullBusybox, removePodLogs, runContainer, type TestPod, waitForExit} from '../support/containers.js'
import {cleanupNamespace, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('exec')
const env = labEnv()
let pod: TestPod
let sleeper: string

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'box', namespace})
  sleeper = await runContainer(client, pod, {name: 'sleeper', script: 'sleep 3600'})
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

describe('podctl exec', () => {
  it("exits with the command's exit code", async () => {
    const result = await podctl(['exec', sleeper.slice(0, 12), '--', 'sh', '-c', 'exit 7'], {env})
    expect(result).toMatchObject({code: 7, stdout: '', stderr: ''})
  })

  it('writes stdout and stderr apart, byte for byte (no added newlines)', async () => {
    const result = await podctl(['exec', sleeper, '--', 'sh', '-c', String.raw`printf out; printf err >&2; printf "\n\n" >&2`], {env})
    expect(result).toMatchObject({code: 0, stdout: 'out', stderr: 'err\n\n'})
  })

  it("passes the command's own flags through after --, --json included", async () => {
    const result = await podctl(['exec', '-n', namespace, 'box/sleeper', '--', 'echo', '-n', '--json', 'x'], {env})
    expect(result).toMatchObject({code: 0, stdout: '--json x', stderr: ''})
  })

  it('--timeout stops a command that runs too long (exit 4)', async () => {
    const result = await podctl(['exec', sleeper, '--timeout', '1s', '--', 'sleep', '30'], {env})
    expect(result.code).toBe(4)
    expect(result.stderr).toBe(
      `Error: command "sleep 30" in container sleeper (${sleeper.slice(0, 13)}) did not finish within 1s (--timeout) ` +
        'and was stopped; raise --timeout to give it longer\n',
    )
    expect(result.ms).toBeLessThan(25_000)
    const ps = await podctl(['exec', sleeper, '--', 'ps'], {env})
    expect(ps.stdout).not.toContain('sleep 30')
  })

  it('a command that finishes within --timeout is not affected', async () => {
    const result = await podctl(['exec', sleeper, '--timeout', '20s', '--', 'sh', '-c', 'sleep 1; echo done'], {env})
    expect(result).toMatchObject({code: 0, stdout: 'done\n'})
  })

  it('runs the command without "--" as crictl does: it starts at the first word after the container', async () => {
    expect(await podctl(['exec', sleeper.slice(0, 12), 'echo', 'hi'], {env})).toMatchObject({code: 0, stdout: 'hi\n', stderr: ''})
    // The command's own flags are its own, and podctl's flags before the container still count.
    const flags = await podctl(['exec', '-n', namespace, 'box/sleeper', 'sh', '-c', 'echo "$@"', 'sh', '-l', '--json'], {env})
    expect(flags).toMatchObject({code: 0, stdout: '-l --json\n', stderr: ''})
    // crictl's -s/--sync is what podctl does without -i/-t.
    expect(await podctl(['exec', '-s', sleeper, '--', 'echo', 'sync'], {env})).toMatchObject({code: 0, stdout: 'sync\n'})
    const sync = await podctl(['exec', '-s', '-t', sleeper, 'sh'], {env})
    expect(sync.code).toBe(2)
    expect(sync.stderr).toContain('--tty=true cannot also be provided when using --sync')
    const empty = await podctl(['exec', sleeper, '--'], {env})
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('no command given')
    const none = await podctl(['exec', sleeper], {env})
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('no command given')
  })

  it('says so when the container is not running (exit 9)', async () => {
    const done = await runContainer(client, pod, {name: 'done', script: 'true'})
    await waitForExit(client, done)
    const result = await podctl(['exec', done, '--', 'true'], {env})
    expect(result.code).toBe(9)
    expect(result.stderr).toBe(`Error: container done (${done.slice(0, 13)}) is not running (exited); exec needs a running container\n`)
  })

  it("a command that cannot start is the runtime's error, not a crash", async () => {
    const result = await podctl(['exec', sleeper, '--', '/no/such/binary'], {env})
    expect(result.code).not.toBe(0)
    expect(result.stderr).not.toContain('    at ') // no stack trace
  })

  it('exits 5 for an unknown container and 15 for an ambiguous prefix', async () => {
    const missing = await podctl(['exec', 'ffffffffffffffffffff', '--', 'true'], {env})
    expect(missing.code).toBe(5)
    const prefix = await ambiguousPrefix(client, pod)
    const ambiguous = await podctl(['exec', prefix, '--', 'true'], {env})
    expect(ambiguous.code).toBe(15)
    expect(ambiguous.stderr).toContain(`container ID prefix "${prefix}" matches`)
  })
})
