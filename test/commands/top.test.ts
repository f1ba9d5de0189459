import {type ChildProcess, spawn} from 'node:child_process'
import {mkdirSync, readFileSync, rmdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseCgroupMounts} from '../../src/lib/host/cgroups.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'
import {endpointEnv, podctl} from '../support/podctl.js'

/**
 * `podctl top` against a fake runtime whose container "app" is a real process of this machine, put
 * in a cgroup of its own as a runtime would: top must list it and its child, and nothing else.
 */
const dir = socketDir()
const socket = join(dir, 'runtime.sock')
const env = endpointEnv(`unix://${socket}`)
const stops: Array<() => Promise<void>> = []
// Named as runtimes name a container's cgroup: after its ID (a process also sits in cgroups it merely inherited).
const APP_ID = `a1b2c3d4e5f6${process.pid}`
const cgroup = `podctl-top-test-${APP_ID}`
let app: ChildProcess
let cgroupDir = ''

/** A cgroup directory of its own: the unified hierarchy on a v2 host, else the v1 pids hierarchy. */
function makeCgroup(): string {
  const mounts = parseCgroupMounts(readFileSync('/proc/self/mountinfo', 'utf8'))
  const v2 = mounts.find((mount) => mount.type === 'cgroup2' && mount.mountPoint === '/sys/fs/cgroup')
  const mount = v2 ?? mounts.find((candidate) => candidate.controllers.includes('pids'))!
  const path = join(mount.mountPoint, cgroup)
  mkdirSync(path)
  return path
}

const container = (id: string, name: string, state: string) => ({
  id,
  podSandboxId: 'sandbox1',
  metadata: {name, attempt: 0},
  state,
  labels: {'io.kubernetes.container.name': name, 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'default'},
  annotations: {},
})

beforeAll(async () => {
  cgroupDir = makeCgroup()
  // sh waits for its cgroup, then starts a child: two processes in the "container".
  app = spawn('sh', ['-c', `while ! grep -q ${cgroup} /proc/$$/cgroup; do sleep 0.05; done; sleep 300 & wait`], {stdio: 'ignore'})
  writeFileSync(join(cgroupDir, 'cgroup.procs'), String(app.pid))
  const containers = [container(APP_ID, 'app', 'CONTAINER_RUNNING'), container('f0f0f0f0f0f0', 'done', 'CONTAINER_EXITED')]
  stops.push(
    await startFakeRuntime(socket, {
      version: versionHandler,
      listPodSandbox: (_call, callback) =>
        callback(null, {
          items: [
            {id: 'sandbox1', metadata: {name: 'web', namespace: 'default', uid: 'u1', attempt: 0}, state: 'SANDBOX_READY', createdAt: 1},
          ],
        }),
      listContainers: (call, callback) =>
        callback(null, {
          containers: containers.filter((c) => !call.request.filter?.podSandboxId || c.podSandboxId === call.request.filter.podSandboxId),
        }),
      containerStatus(call, callback) {
        const found = containers.find((c) => c.id === call.request.containerId)!
        callback(null, {status: {...found, id: found.id}, info: {info: JSON.stringify({pid: app.pid})}})
      },
    }),
  )
  // Wait until sh has seen its cgroup and started its child.
  const deadline = Date.now() + 10_000
  while (readFileSync(join(cgroupDir, 'cgroup.procs'), 'utf8').trim().split('\n').length < 2 && Date.now() < deadline) {
    await sleep(50)
  }
})

afterAll(async () => {
  app.kill('SIGKILL')
  for (const pid of readFileSync(join(cgroupDir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) process.kill(Number(pid), 'SIGKILL')
  await sleep(200)
  rmdirSync(cgroupDir)
  for (const stop of stops) await stop()
})

describe.runIf(process.getuid?.() === 0)('podctl top', () => {
  it("lists the container's processes, and only them, with host pids, user and command", async () => {
    const result = await podctl(['top', 'web', '-o', 'json'], {env})
    expect(result).toMatchObject({code: 0, stderr: ''})
    const {processes} = JSON.parse(result.stdout) as {processes: Array<Record<string, unknown>>}
    expect(processes.map((row) => row.command)).toEqual([
      `sh -c while ! grep -q ${cgroup} /proc/$$/cgroup; do sleep 0.05; done; sleep 300 & wait`,
      'sleep 300',
    ])
    expect(processes[0]).toMatchObject({container: 'app', containerId: APP_ID, hostPid: app.pid, pid: app.pid, user: 'root'})
    expect(Object.keys(processes[0])).toEqual(['container', 'containerId', 'pid', 'hostPid', 'user', 'cpuPercent', 'rssBytes', 'command'])
    expect(processes[1].rssBytes).toBeGreaterThan(0)
  })

  it('prints a table with one row per process', async () => {
    const result = await podctl(['top', 'web/app'], {env})
    expect(result.code).toBe(0)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^CONTAINER\s+PID\s+HOST PID\s+USER\s+CPU %\s+MEM\s+COMMAND$/)
    expect(lines).toHaveLength(3)
    expect(lines[2]).toMatch(/^app\s+\d+\s+\d+\s+root\s+\d+\.\d\s+\S+\s+sleep 300$/)
  })

  it('refuses a container that is not running (exit 18), and names a pod that does not exist (exit 5)', async () => {
    const stopped = await podctl(['top', 'web/done'], {env})
    expect(stopped).toMatchObject({code: 18, stdout: ''})
    expect(stopped.stderr).toBe(
      'Error: container done (f0f0f0f0f0f0) is not running (exited): podctl reaches into a container through its running process\n',
    )
    expect(await podctl(['top', 'nothere'], {env})).toMatchObject({code: 5, stdout: ''})
  })
})
