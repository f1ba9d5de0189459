import {rmSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ambiguousPrefix, createPod, pullBusybox, removePodLogs, runContainer, type TestPod, waitForExit} from '../support/containers.js'
import {cleanupNamespace, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('logs')
const env = labEnv()
let pod: TestPod
let writer: string

const LONG = 'a'.repeat(20_000) // longer than containerd's 16 KiB line limit: written as P + F
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}(Z|[+-]\d{2}:\d{2}) /

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'web', namespace})
  writer = await runContainer(client, pod, {
    name: 'writer',
    // stdout and stderr are stamped by separate copiers: the pause keeps err2 after out2 in time,
    // so `--since <out2's time>` must include it.
    script:
      'echo out1; echo err1 >&2; sleep 1.2; echo out2; sleep 0.3; echo err2 >&2; ' +
      `head -c ${LONG.length} /dev/zero | tr '\\0' a; echo; printf no-newline`,
  })
  await waitForExit(client, writer)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  removePodLogs(pod)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
})

describe('podctl logs', () => {
  it("splits the container's stdout and stderr onto podctl's, joining split lines", async () => {
    const result = await podctl(['logs', writer.slice(0, 12)], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`out1\nout2\n${LONG}\nno-newline`)
    expect(result.stderr).toBe('err1\nerr2\n')
  })

  it('finds the container by POD/CONTAINER in a namespace', async () => {
    const result = await podctl(['logs', '-n', namespace, 'web/writer', '--stream', 'stderr'], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('err1\nerr2\n')
    expect(result.stderr).toBe('')
  })

  it('--tail counts whole lines after --stream; the unfinished last line stays as written', async () => {
    const stdout = await podctl(['logs', writer, '--stream', 'stdout', '--tail', '2'], {env})
    expect(stdout.stdout).toBe(`${LONG}\nno-newline`)
    const both = await podctl(['logs', writer, '--tail', '1'], {env})
    expect(both.stdout).toBe('no-newline')
    expect(both.stderr).toBe('')
    const none = await podctl(['logs', writer, '--tail', '0'], {env})
    expect([none.code, none.stdout, none.stderr]).toEqual([0, '', ''])
  })

  it('--timestamps prefixes each line with its fixed-width RFC 3339 time', async () => {
    const result = await podctl(['logs', writer, '-t', '--stream', 'stdout'], {env})
    const lines = result.stdout.split('\n')
    expect(lines).toHaveLength(4)
    for (const line of lines) expect(line).toMatch(TS)
    expect(lines.map((line) => line.replace(TS, ''))).toEqual(['out1', 'out2', LONG, 'no-newline'])
  })

  it('--since keeps lines at or after a time, or within a duration', async () => {
    const stamped = await podctl(['logs', writer, '-t', '--stream', 'stdout'], {env})
    const out2Time = stamped.stdout.split('\n')[1].split(' ')[0]
    const since = await podctl(['logs', writer, '--since', out2Time], {env})
    expect(since.stdout).toBe(`out2\n${LONG}\nno-newline`)
    expect(since.stderr).toBe('err2\n')
    const recent = await podctl(['logs', writer, '--since', '1h'], {env})
    expect(recent.stdout).toBe(`out1\nout2\n${LONG}\nno-newline`)
    const future = await podctl(['logs', writer, '--since', '2999-01-01T00:00:00Z'], {env})
    expect([future.code, future.stdout, future.stderr]).toEqual([0, '', ''])
    const bad = await podctl(['logs', writer, '--since', 'yesterday'], {env})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--since "yesterday"')
  })

  it('--follow prints lines as they come and returns by itself when the container exits', async () => {
    // The container waits (after "ready") until podctl is following, so the test does not race podctl's start-up.
    const ticker = await runContainer(client, pod, {
      name: 'ticker',
      script:
        'echo ready; until [ -f /tmp/go ]; do sleep 0.1; done; for i in 1 2 3; do echo tick$i; sleep 1; done; ' +
        'printf part; sleep 0.5; echo ial; echo oops >&2',
    })
    const chunks: string[] = []
    const result = await podctl(['logs', '-f', ticker], {
      env,
      timeoutMs: 60_000,
      onSpawn: (child) =>
        child.stdout?.on('data', (chunk) => {
          chunks.push(String(chunk))
          if (chunks.length === 1) void client.runtime('execSync', {containerId: ticker, cmd: ['touch', '/tmp/go'], timeout: '10'})
        }),
    })
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('ready\ntick1\ntick2\ntick3\npartial\n')
    expect(result.stderr).toBe('oops\n')
    expect(chunks[0]).toBe('ready\n')
    expect(chunks.length).toBeGreaterThan(3) // streamed as written, not printed at the end
    const {status} = await client.runtime('containerStatus', {containerId: ticker, verbose: false})
    expect(status?.state).toBe('CONTAINER_EXITED') // it returned because the container exited
  })

  it('--follow on an exited container prints everything and returns at once', async () => {
    const result = await podctl(['logs', '-f', writer], {env})
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(`out1\nout2\n${LONG}\nno-newline`)
  })

  it("--previous reads the previous attempt's file, and says when there is none", async () => {
    const first = await runContainer(client, pod, {name: 'restarter', script: 'echo first life'})
    await waitForExit(client, first)
    const second = await runContainer(client, pod, {name: 'restarter', attempt: 1, script: 'echo second life'})
    await waitForExit(client, second)

    const current = await podctl(['logs', '-n', namespace, 'web/restarter'], {env})
    expect(current.stdout).toBe('second life\n')
    const previous = await podctl(['logs', '-n', namespace, 'web/restarter', '-p'], {env})
    expect(previous.code).toBe(0)
    expect(previous.stdout).toBe('first life\n')

    const none = await podctl(['logs', writer, '--previous'], {env})
    expect(none.code).toBe(5)
    expect(none.stderr).toBe("Error: container writer is on its first attempt (0): there is no previous attempt's log\n")
  })

  it('names the path when the log file is gone', async () => {
    const gone = await runContainer(client, pod, {name: 'gone', script: 'echo bye'})
    await waitForExit(client, gone)
    const {status} = await client.runtime('containerStatus', {containerId: gone, verbose: false})
    rmSync(status!.logPath)
    const result = await podctl(['logs', gone], {env})
    expect(result.code).toBe(5)
    expect(result.stderr).toContain(`log file ${status!.logPath} does not exist`)
    expect(result.stderr.split('\n')).toHaveLength(2) // one line, no stack trace
  })

  it('exits 5 for an unknown container and 15 for an ambiguous prefix', async () => {
    const missing = await podctl(['logs', 'ffffffffffffffffffff'], {env})
    expect(missing.code).toBe(5)
    expect(missing.stderr).toContain('container "ffffffffffffffffffff" not found')

    const missingName = await podctl(['logs', '-n', namespace, 'web/nope'], {env})
    expect(missingName.code).toBe(5)

    const prefix = await ambiguousPrefix(client, pod)
    const ambiguous = await podctl(['logs', prefix], {env})
    expect(ambiguous.code).toBe(15)
    expect(ambiguous.stderr).toMatch(new RegExp(`container ID prefix "${prefix}" matches \\d+ containers: `))
  })

  it('rejects bad flag values as usage errors', async () => {
    const result = await podctl(['logs', writer, '--stream', 'stdin'], {env})
    expect(result.code).toBe(2)
    const noArg = await podctl(['logs'], {env})
    expect(noArg.code).toBe(2)
  })
})
