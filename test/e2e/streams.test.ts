import {type ChildProcessWithoutNullStreams, spawn} from 'node:child_process'

import http from 'node:http'
import net from 'node:net'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../src/lib/cri/client.js'
import {ContainerLabel, PodLabel} from '../../src/lib/kube/labels.js'

import {createPod, pullBusybox, removePodLogs, runContainer, type TestPod} from '../support/containers.js'
import {cleanupNamespace, lab, labClient, labEnv, makeContainerLogDir, sandboxConfig, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {BIN, podctl} from '../support/podctl.js'

const client = labClient()
const namespace = uniqueNamespace('streams')
const env = labEnv()
let pod: TestPod
let sleeper: string
let reader: string

const HTTPD =
  'mkdir -p /www /www2 && echo hello-from-8080 > /www/index.html && echo hello-from-8081 > /www2/index.html && ' +
  'httpd -p 8081 -h /www2 && exec httpd -f -p 8080 -h /www'

beforeAll(async () => {
  await pullBusybox(client)
  pod = await createPod(client, {name: 'box', namespace})
  sleeper = await runContainer(client, pod, {name: 'sleeper', script: 'sleep 3600'})
  await runContainer(client, pod, {name: 'web', script: HTTPD})
  reader = await createReader(client, pod)
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

// After "quit" it waits a moment before exiting: containerd closes an attach session when the
// process exits and may drop output written in the same instant (kubectl attach sees the same).
const READER = 'while read -r line; do echo "got $line"; [ "$line" = quit ] && sleep 1 && exit 0; done; echo eof'

/** A container whose main process reads stdin (stdin: true): by default one that echoes each line until "quit". */
async function createReader(
  cri: CriClient,
  target: TestPod,
  {name = 'reader', command = ['sh', '-c', READER], tty = false}: {name?: string; command?: string[]; tty?: boolean} = {},
): Promise<string> {
  makeContainerLogDir(sandboxConfig(target.spec), name)
  const {containerId} = await cri.runtime('createContainer', {
    podSandboxId: target.id,
    config: {
      metadata: {name, attempt: 0},
      image: {image: lab().busybox},
      command,
      stdin: true,
      tty,
      logPath: `${name}/0.log`,
      labels: {
        [ContainerLabel.name]: name,
        [PodLabel.name]: target.spec.name,
        [PodLabel.namespace]: target.spec.namespace,
        [PodLabel.uid]: target.spec.uid,
      },
      linux: {},
    },
    sandboxConfig: sandboxConfig(target.spec),
  })
  await cri.runtime('startContainer', {containerId})
  return containerId
}

/** GET / through a forwarded port on loopback, a fresh connection each time. */
function httpGet(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get({host: '127.0.0.1', port, path: '/', agent: false}, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (text: string) => {
        body += text
      })
      response.on('end', () => resolve(body))
    })
    request.on('error', reject)
    request.setTimeout(20_000, () => request.destroy(new Error('no answer within 20s')))
  })
}

function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({host: '127.0.0.1', port})
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => {
      setTimeout(resolve, 100)
    })
  }
}

/** Runs a command line (e.g. script or bash around podctl) with the lab's environment; stdin is closed. */
function shell(argv: string[]): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {env: {...process.env, ...env, NO_COLOR: '1'} as NodeJS.ProcessEnv})
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({code, stdout, stderr})
    })
    child.stdin.end()
  })
}

/** A podctl process whose output is read while it runs. */
function running(args: string[]): {child: ChildProcessWithoutNullStreams; stdout: () => string; stderr: () => string} {
  const child = spawn(process.execPath, [BIN, ...args], {env: {...process.env, ...env, NO_COLOR: '1'} as NodeJS.ProcessEnv})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  return {child, stdout: () => stdout, stderr: () => stderr}
}

describe('port-forward', () => {
  it('forwards two ports (one on a free local port) on loopback, and Ctrl-C ends it with exit 0, nothing left listening', async () => {
    // httpd is up when the container itself can fetch from it.
    await until('httpd in the pod', async () => {
      const probe = await client.runtime('execSync', {containerId: sleeper, cmd: ['wget', '-qO-', 'http://127.0.0.1:8081/'], timeout: '5'})
      return probe.exitCode === 0 ? true : undefined
    })
    const forward = running(['port-forward', '-n', namespace, 'box', ':8080', '0:8081'])
    const ports = await until('the Forwarding lines', async () => {
      const found = [...forward.stdout().matchAll(/^Forwarding from 127\.0\.0\.1:(\d+) -> (8080|8081)$/gm)]
      return found.length === 2 ? Object.fromEntries(found.map((m) => [m[2], Number(m[1])])) : undefined
    })
    expect(await httpGet(ports['8080'])).toBe('hello-from-8080\n')
    expect(await httpGet(ports['8081'])).toBe('hello-from-8081\n')
    expect(await httpGet(ports['8080'])).toBe('hello-from-8080\n')
    expect(forward.stdout()).toContain(`Handling connection for ${ports['8080']}\n`)
    forward.child.kill('SIGINT')
    expect(await exitOf(forward.child)).toBe(0)
    expect(forward.stderr()).toBe('')
    expect(await connectionRefused(ports['8080'])).toBe(true)
    expect(await connectionRefused(ports['8081'])).toBe(true)
  })

  it('--address localhost listens on 127.0.0.1 (and ::1 where the host has it)', async () => {
    const forward = running(['port-forward', '-n', namespace, 'box', ':8080', '--address', 'localhost'])
    const port = await until('the Forwarding line', async () => {
      const found = /^Forwarding from 127\.0\.0\.1:(\d+) -> 8080$/m.exec(forward.stdout())
      return found ? Number(found[1]) : undefined
    })
    expect(await httpGet(port)).toBe('hello-from-8080\n')
    expect(forward.stdout()).toMatch(/^(Forwarding from 127\.0\.0\.1:\d+ -> 8080\n)(Forwarding from \[::1\]:\d+ -> 8080\n)?/)
    forward.child.kill('SIGINT')
    expect(await exitOf(forward.child)).toBe(0)
    expect(await connectionRefused(port)).toBe(true)
  })

  it('a bad port is a usage error (exit 2) naming it', async () => {
    const result = await podctl(['port-forward', '-n', namespace, 'box', '8080:http'], {env})
    expect(result.code).toBe(2)
    expect(result.stderr).toBe('Error: port "8080:http": not a port; give [LOCAL:]REMOTE, e.g. 8080, 9000:80 or :80 (a free local port)\n')
  })
})

describe('attach', () => {
  it("-i sends stdin to the container's main process and shows its output; the session ends when it exits", async () => {
    // containerd detaches when stdin ends (for a container without stdinOnce), so stdin stays open until the process exits.
    const attach = running(['attach', '-i', '-n', namespace, 'box/reader'])
    attach.child.stdin.write('hello\n')
    await until('the echo', async () => (attach.stdout().includes('got hello\n') ? true : undefined))
    attach.child.stdin.write('quit\n')
    expect(await exitOf(attach.child)).toBe(0)
    expect(attach.stdout()).toBe('got hello\ngot quit\n')
    expect(attach.stderr()).toBe('')
    attach.child.stdin.end()
  })

  it('-it to a container with a terminal: typed commands run in its shell', async () => {
    const shellContainer = await createReader(client, pod, {name: 'console', command: ['sh'], tty: true})
    const session = inTerminal(['attach', '-it', shellContainer])
    // The shell printed its prompt before podctl attached: a newline asks for a fresh one.
    await until('the attach to be up', async () => {
      session.child.stdin.write('\r')
      await new Promise((resolve) => {
        setTimeout(resolve, 300)
      })
      return session.output().includes('# ') ? true : undefined
    })
    session.child.stdin.write('echo attached-$((40+2))\r')
    await session.waitFor('attached-42')
    session.child.stdin.write('exit 4\r')
    expect(await exitOf(session.child)).toBe(0)
    session.child.stdin.end()
  })

  it('refuses a container that is not running (exit 9)', async () => {
    await until('the reader to exit', async () => {
      const status = await client.runtime('containerStatus', {containerId: reader})
      return status.status?.state === 'CONTAINER_EXITED' ? true : undefined
    })
    const result = await podctl(['attach', reader], {env})
    expect(result.code).toBe(9)
    expect(result.stderr).toMatch(/^Error: container reader \(\w+\) is not running \(exited\); attach needs a running container\n$/)
  })
})

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

  it('puts the terminal back as it was (cooked, echo on) after the session', async () => {
    const line = [process.execPath, BIN, 'exec', '-it', sleeper, '--', 'sh', '-c', 'exit 2'].map((word) => `'${word}'`).join(' ')
    const script = `${line}; echo "podctl=$?"; stty -a`
    const result = await shell(['script', '-qec', script, '/dev/null'])
    expect(result.stdout).toContain('podctl=2')
    expect(result.stdout).toMatch(/(^|\s)icanon(\s|$)/m)
    expect(result.stdout).toMatch(/(^|\s)echo(\s|$)/m)
    expect(result.stdout).toMatch(/(^|\s)isig(\s|$)/m)
  })

  it('exec -t without -i leaves the keys local: Ctrl-C on the terminal interrupts podctl (exit 130)', async () => {
    const session = inTerminal(['exec', '-t', sleeper, '--', 'sh', '-c', 'echo ready; sleep 60'])
    await session.waitFor('ready')
    session.child.stdin.write('\u0003')
    expect(await exitOf(session.child)).toBe(130)
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

  it('Ctrl-C (SIGINT, no terminal) ends the session cleanly with exit 130', async () => {
    const exec = running(['exec', '-i', sleeper, '--', 'sh', '-c', 'echo started; cat'])
    await until('the command to start', async () => (exec.stdout().includes('started\n') ? true : undefined))
    exec.child.kill('SIGINT')
    expect(await exitOf(exec.child)).toBe(130)
    expect(exec.stderr()).toBe('Error: interrupted; the session was closed\n')
  })

  it('a closed output pipe ends the session quietly', async () => {
    const line = [process.execPath, BIN, 'exec', '-i', sleeper, '--', 'sh', '-c', 'while true; do echo y; done']
      .map((w) => `'${w}'`)
      .join(' ')
    const result = await shell(['bash', '-c', `${line} | head -2; echo "podctl=\${PIPESTATUS[0]}"`])
    expect(result.stdout).toBe('y\ny\npodctl=0\n')
    expect(result.stderr).toBe('')
  })

  it("exits with the command's exit code", async () => {
    const result = await podctl(['exec', '-i', sleeper, '--', 'sh', '-c', 'echo out; echo err >&2; exit 5'], {env})
    expect(result).toMatchObject({code: 5, stdout: 'out\n', stderr: 'err\n'})
  })
})
