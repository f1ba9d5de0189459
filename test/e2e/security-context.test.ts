import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, podAddressPattern, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl, ROOT} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

/**
 * Pod and container security contexts, sysctls, hostAliases, the warning about cluster-only
 * fields, --strict and admission, against the lab: what the container sees (exec) and what
 * reached the runtime (inspect).
 */
const client = labClient()
const namespace = uniqueNamespace('secctx')
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-secctx-pods-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot})

/** A fixture from test/fixtures with the lab's busybox, as the users changed image names only. */
function fixture(name: string): string {
  return readFileSync(join(ROOT, 'test/fixtures', name), 'utf8').replaceAll('image: busybox:1.36', `image: ${lab().busybox}`)
}

function run(args: string[], manifest: string) {
  // A run slower than this (a loaded lab) fails with its own message rather than the test's timeout.
  return podctl(['run', '-n', namespace, '--timeout', '90s', ...args, '-f', '-'], {env, input: manifest})
}

async function exec(target: string, ...command: string[]) {
  const result = await podctl(['exec', '-n', namespace, target, '--', ...command], {env})
  expect(result.code, result.stderr).toBe(0)
  return result.stdout
}

async function inspect(target: string) {
  const result = await podctl(['inspect', '-n', namespace, target, '-o', 'json'], {env})
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  rmSync(podDirRoot, {recursive: true, force: true})
  client.close()
})

describe('the pod securityContext on the lab', () => {
  it('runs the user, group, fsGroup and supplemental groups the pod asks for', async () => {
    const result = await run(['-q'], fixture('security-context.yaml'))
    expect(result.code, result.stderr).toBe(0)
    expect(await exec('security-context-demo/sec-ctx-demo', 'id')).toBe('uid=1000 gid=3000 groups=2000,3000,4000\n')
    const container = await inspect('security-context-demo/sec-ctx-demo')
    expect(container.info.runtimeSpec.process.user).toEqual({uid: 1000, gid: 3000, additionalGids: [2000, 3000, 4000]})
    expect(container.info.runtimeSpec.process.noNewPrivileges).toBe(true)
    const sandbox = await inspect('security-context-demo')
    expect(sandbox.info.config.linux.security_context).toMatchObject({
      run_as_user: {value: 1000},
      run_as_group: {value: 3000},
      supplemental_groups: [2000, 4000],
    })
  })

  it("lets a container's runAsUser override the pod's", async () => {
    const result = await run(['-q'], fixture('security-context-2.yaml'))
    expect(result.code, result.stderr).toBe(0)
    expect(await exec('security-context-demo-2/sec-ctx-demo-2', 'id', '-u')).toBe('2000\n')
  })

  it('sets namespaced sysctls on the sandbox; every container sees them', async () => {
    const result = await run(['-q'], fixture('sysctl-example.yaml'))
    expect(result.code, result.stderr).toBe(0)
    const values = await exec(
      'sysctl-example/app',
      'cat',
      '/proc/sys/kernel/shm_rmid_forced',
      '/proc/sys/net/ipv4/ip_unprivileged_port_start',
    )
    expect(values).toBe('1\n80\n')
    const sandbox = await inspect('sysctl-example')
    // The pod's sysctls as sent; containerd 2.x adds its own (net.ipv4.ping_group_range, enable_unprivileged_icmp).
    expect(sandbox.info.config.linux.sysctls).toMatchObject({'kernel.shm_rmid_forced': '1', 'net.ipv4.ip_unprivileged_port_start': '80'})
  })

  it("refuses a container that would run as root under runAsNonRoot (CreateContainerConfigError, the kubelet's message)", async () => {
    const manifest = `apiVersion: v1
kind: Pod
metadata: {name: nonroot}
spec:
  securityContext: {runAsNonRoot: true}
  containers:
  - {name: app, image: ${lab().busybox}, command: [sleep, "3600"], securityContext: {runAsUser: 0}}
`
    const result = await run(['-q'], manifest)
    expect(result.code).toBe(14)
    expect(result.stderr).toMatch(
      new RegExp(
        String.raw`^Error: pod nonroot_${namespace}: CreateContainerConfigError: container's runAsUser breaks non-root policy ` +
          String.raw`\(pod: "nonroot_${namespace}\([0-9a-f-]+\)", container: app\)`,
      ),
    )
    const pods = await podctl(['pods', '-n', namespace, '--name', 'nonroot', '-q'], {env})
    expect(pods.stdout).toBe('')
  })
})

describe('more pod and container fields on the lab', () => {
  it('passes stdin/tty to the runtime and applies the RuntimeDefault seccomp profile', async () => {
    const manifest = `apiVersion: v1
kind: Pod
metadata: {name: tty}
spec:
  securityContext: {seccompProfile: {type: RuntimeDefault}}
  containers:
  - {name: app, image: ${lab().busybox}, command: [sleep, "3600"], stdin: true, tty: true}
`
    const result = await run(['-q'], manifest)
    expect(result.code, result.stderr).toBe(0)
    const container = await inspect('tty/app')
    expect(container.info.config).toMatchObject({stdin: true, tty: true})
    expect(container.info.runtimeSpec.process.terminal).toBe(true)
    expect(container.info.runtimeSpec.linux.seccomp.defaultAction).toBe('SCMP_ACT_ERRNO')
    expect(await exec('tty/app', 'sh', '-c', 'grep ^Seccomp: /proc/self/status')).toBe('Seccomp:\t2\n')
  })

  it('refuses hostUsers: false on a runtime without user namespaces, creating nothing (exit 14)', async () => {
    const manifest = `apiVersion: v1
kind: Pod
metadata: {name: userns}
spec:
  hostUsers: false
  containers:
  - {name: app, image: ${lab().busybox}, command: [sleep, "3600"]}
`
    const result = await run(['-q'], manifest)
    expect(result.code).toBe(14)
    expect(result.stderr).toMatch(
      new RegExp(
        String.raw`^Error: pod userns_${namespace}: spec.hostUsers is false, but RuntimeClass handler "" does not support user namespaces`,
      ),
    )
    const pods = await podctl(['pods', '-n', namespace, '--name', 'userns', '-q'], {env})
    expect(pods.stdout).toBe('')
  })
})

describe('hostAliases', () => {
  it('adds them to the managed /etc/hosts of every container', async () => {
    const result = await run(['--wait', 'completed', '-q'], fixture('hostaliases-pod.yaml'))
    expect(result.code, result.stderr).toBe(0)
    const logs = await podctl(['logs', '-n', namespace, 'hostaliases-pod/cat-hosts'], {env})
    expect(logs.stdout).toMatch(new RegExp(String.raw`\n${podAddressPattern()}\thostaliases-pod\n\n# Entries added by HostAliases\.\n`))
    expect(logs.stdout.endsWith('\n127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tfoo.remote\tbar.remote\n')).toBe(true)
  })
})

describe('--dry-run', () => {
  it('shows the managed /etc/hosts with the aliases, and its mount', async () => {
    const result = await run(['--dry-run', '-o', 'json'], fixture('hostaliases-pod.yaml'))
    expect(result.code, result.stderr).toBe(0)
    const [plan] = JSON.parse(result.stdout).pods
    expect(
      plan.etcHosts.endsWith(
        '<pod IP>\thostaliases-pod\n\n# Entries added by HostAliases.\n127.0.0.1\tfoo.local\tbar.local\n' +
          '10.1.2.3\tfoo.remote\tbar.remote\n',
      ),
    ).toBe(true)
    const create = plan.calls.find((call: {rpc: string}) => call.rpc === 'RuntimeService/CreateContainer')
    expect(create.request.config.mounts).toContainEqual(
      expect.objectContaining({containerPath: '/etc/hosts', hostPath: join(podDirRoot, plan.uid, 'etc-hosts')}),
    )
  })
})

describe('fields with no effect on a single node, and --strict', () => {
  const exported = () => fixture('exported-pod.yaml').replace('  namespace: default\n', '')

  it('runs an exported pod with one warning line listing every such field', async () => {
    const result = await run(['--dry-run', '-o', 'json'], exported())
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe(
      'Warning: ignored on a single node: <stdin>: status, metadata.creationTimestamp, metadata.resourceVersion ' +
        '(read-back metadata of an object from a cluster); spec.enableServiceLinks (there are no Services without an API server); ' +
        'spec.nodeName, spec.preemptionPolicy, spec.priority, spec.schedulerName, spec.tolerations ' +
        '(scheduling: the pod runs on this node); ' +
        'spec.serviceAccount, spec.serviceAccountName (there is no API server: no token is mounted); --strict refuses them\n',
    )
    const plan = JSON.parse(result.stdout)
    expect(plan.pods[0].namespace).toBe(namespace)
    expect(plan.pods[0].ignoredFields).toContainEqual({path: 'spec.nodeName', reason: 'scheduling: the pod runs on this node'})
    expect(plan.pods[0].admission).toMatchObject({admitted: true, requested: {cpu: '0m', memory: '0'}})
  })

  it('--strict refuses them all in one error (exit 2)', async () => {
    const result = await run(['--strict'], exported())
    expect(result.code).toBe(2)
    const lines = result.stderr.trimEnd().split('\n')
    expect(lines[0]).toBe('Error: --strict refuses 11 fields with no effect on a single node:')
    expect(lines).toContain('  <stdin>: spec.nodeName has no effect on a single node (scheduling: the pod runs on this node)')
    expect(lines).toHaveLength(12)
  })

  it('refuses a manifest namespace other than -n, as kubectl does', async () => {
    const result = await run(['--dry-run'], fixture('exported-pod.yaml'))
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      `Error: <stdin>: metadata.namespace "default" does not match the namespace "${namespace}" of --namespace; ` +
        'pass --namespace default, or leave it out\n',
    )
  })
})

describe('admission', () => {
  const hungry = `apiVersion: v1
kind: Pod
metadata: {name: hungry}
spec:
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, "3600"]
    resources: {requests: {memory: 1000Ti}}
`

  it("refuses a pod whose requests exceed the node's memory (OutOfmemory, exit 14), creating nothing", async () => {
    const result = await run(['-q'], hungry)
    expect(result.code).toBe(14)
    expect(result.stderr).toMatch(
      new RegExp(
        String.raw`^Error: pod hungry_${namespace}: OutOfmemory: Pod was rejected: Node didn't have enough resource: memory, ` +
          String.raw`requested: 1099511627776000, used: 0, capacity: \d+ \(--skip-admission runs it anyway\)\n$`,
      ),
    )
    const pods = await podctl(['pods', '-n', namespace, '--name', 'hungry', '-q'], {env})
    expect(pods.stdout).toBe('')
  })

  it('shows the verdict in --dry-run', async () => {
    const result = await run(['--dry-run', '-o', 'json'], hungry)
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).pods[0].admission).toMatchObject({admitted: false, reason: 'OutOfmemory'})
  })
})
