import {type ChildProcessWithoutNullStreams, spawn} from 'node:child_process'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {createPod, pullBusybox, removePodLogs, runContainer, type TestPod} from '../support/containers.js'
import {cleanupNamespace, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {BIN, podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('streams')
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

/** Runs podctl under `script`, which gives it a pseudo-terminal as stdin and stdout, as a user's shell does. */
function inTerminal(args: string[]): {
  child: ChildProcessWithoutNullStreams
  output: () => string
  waitFor: (text: string) => Promise<void>
} {
  const line = [process.execPath, BIN, ...args].map((word) => `'${word}'`).join(' ')
  const child = spawn('script', ['-qec', line, '/dev/null'], {env: {...process.env, ...env, NO_COLOR: '1'} as NodeJS.ProcessEnv})
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8')
  })
  const waitFor = async (text: string) => {
    const deadline = Date.now() + 30_000
    while (!output.includes(text)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${JSON.stringify(text)} in ${JSON.stringify(output)}`)
      await new Promise((resolve) => {
        setTimeout(resolve, 50)
      })
    }
  }

  return {child, output: () => output, waitFor}
}

function exitOf(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode)
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code))
  })
}

describe('exec -it', () => {
  it("runs a shell on a terminal: typed commands run, and podctl exits with the shell's exit code", async () => {
    const session = inTerminal(['exec', '-it', sleeper, '--', 'sh'])
    await session.waitFor('# ')
    session.child.stdin.write('echo hello-$((40+2)); tty\r')
    await session.waitFor('hello-42')
    await session.waitFor('/dev/pts/')
    session.child.stdin.write('exit 3\r')
    expect(await exitOf(session.child)).toBe(3)
    session.child.stdin.end()
  })

  it('exec -t gives the command a terminal without stdin', async () => {
    const result = await podctl(['exec', '-t', sleeper, '--', 'sh', '-c', 'tty; exit 4'], {env})
    expect(result.code).toBe(4)
    expect(result.stdout).toMatch(/^\/dev\/pts\/\d+\r\n$/)
  })
})

describe('exec -i', () => {
  it('pipes stdin to the command and ends it at EOF', async () => {
    const result = await podctl(['exec', '-i', sleeper, '--', 'cat'], {env, input: 'piped\n'})
    expect(result).toMatchObject({code: 0, stdout: 'piped\n', stderr: ''})
  })

  it("exits with the command's exit code", async () => {
    const result = await podctl(['exec', '-i', sleeper, '--', 'sh', '-c', 'echo out; echo err >&2; exit 5'], {env})
    expect(result).toMatchObject({code: 5, stdout: 'out\n', stderr: 'err\n'})
  })
})
