import {existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ContainerLabel, PodLabel} from '../../src/lib/kube/labels.js'
import {cleanupNamespace, lab, labClient, labEnv, podAddressPattern, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {leftovers, pullBusybox} from '../support/pods.js'

/**
 * `podctl run` against the lab's containerd: what users see (exit codes, events, JSON) and what
 * the runtime holds afterwards (labels, annotations, and nothing left behind after a failure).
 */
const client = labClient()
const namespaces: string[] = []
const podDirRoot = mkdtempSync(join(tmpdir(), 'podctl-run-pods-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: podDirRoot, PODCTL_BACKOFF_BASE_MS: '300'})
const busybox = lab().busybox
/** The lab's extra runtime handler (in the runtime's config), for runtimeClassName. */
const handler = lab().runtimeHandler

/** Stops at once on SIGTERM (PID 1 ignores signals it does not trap). */
const SERVE = 'trap "exit 0" TERM; while true; do sleep 1; done'

function ns(prefix: string): string {
  const name = uniqueNamespace(prefix)
  namespaces.push(name)
  return name
}

interface ContainerSpec {
  name: string
  image?: string
  command?: string[]
  [key: string]: unknown
}

function podManifest(name: string, namespace: string, spec: {containers: ContainerSpec[]; [key: string]: unknown}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, namespace},
    spec: {
      terminationGracePeriodSeconds: 2,
      ...spec,
      containers: spec.containers.map((container) => ({image: busybox, ...container})),
      ...(spec.initContainers ? {initContainers: (spec.initContainers as ContainerSpec[]).map((c) => ({image: busybox, ...c}))} : {}),
    },
  }
}

function run(args: string[], manifest?: unknown, options: Parameters<typeof podctl>[1] = {}) {
  return podctl(['run', ...args, ...(manifest ? ['-f', '-'] : [])], {
    env,
    input: manifest === undefined ? undefined : JSON.stringify(manifest),
    ...options,
  })
}

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  for (const namespace of namespaces) await cleanupNamespace(client, namespace)
  for (const namespace of namespaces) expect(await sandboxesIn(client, namespace)).toEqual([])
  rmSync(podDirRoot, {recursive: true, force: true})
  client.close()
})

describe('podctl run', () => {
  it('runs a pod with an init container and hooks in the kubelet order, reports Running, and labels it like the kubelet', async () => {
    const namespace = ns('run-main')
    const manifest = podManifest('web', namespace, {
      volumes: [{name: 'shared', emptyDir: {}}],
      initContainers: [
        {name: 'setup', command: ['sh', '-c', 'echo from-init > /shared/init.txt'], volumeMounts: [{name: 'shared', mountPath: '/shared'}]},
      ],
      containers: [
        {
          name: 'app',
          command: ['sh', '-c', SERVE],
          env: [
            {name: 'WHO', value: 'world'},
            {name: 'GREETING', value: 'hello $(WHO)'},
          ],
          ports: [{name: 'http', containerPort: 8080}],
          resources: {limits: {cpu: '250m', memory: '64Mi'}},
          lifecycle: {
            postStart: {exec: {command: ['sh', '-c', 'echo from-poststart > /shared/poststart.txt']}},
            preStop: {exec: {command: ['sh', '-c', 'echo bye']}},
          },
          volumeMounts: [{name: 'shared', mountPath: '/shared'}],
        },
        {name: 'sidecar', command: ['sh', '-c', SERVE]},
      ],
    })

    const result = await run(['-o', 'json'], manifest)
    expect(result.code, result.stderr).toBe(0)
    // Events go to stderr with -o json, in the kubelet's order: the init container completes before app containers are created.
    const reasons = result.stderr
      .split('\n')
      .filter((line) => /^(Normal|Warning)\s/.test(line))
      .map((line) =>
        line
          .split(/\s+/)
          .slice(0, 4)
          .filter((_, i) => i !== 2)
          .join(' '),
      )
    expect(reasons.filter((line) => /Created|Started/.test(line))).toEqual([
      'Normal Created setup',
      'Normal Started setup',
      'Normal Created app',
      'Normal Started app',
      'Normal Created sidecar',
      'Normal Started sidecar',
    ])
    expect(result.stderr).toMatch(/^TYPE\s+REASON\s+AGE\s+OBJECT\s+MESSAGE$/m)
    expect(result.stderr).toContain('Created container: app')

    const {pods} = JSON.parse(result.stdout)
    expect(pods).toHaveLength(1)
    const [pod] = pods
    expect(pod).toMatchObject({pod: 'web', namespace, attempt: 0, phase: 'Running', rolledBack: false, removed: false, error: null})
    expect(pod.sandboxId).toMatch(/^[0-9a-f]{64}$/)
    expect(pod.ip).toMatch(new RegExp(`^${podAddressPattern()}$`))
    expect(
      pod.containers.map((c: {name: string; type: string; state: string; exitCode: number | null}) => [
        c.name,
        c.type,
        c.state,
        c.exitCode,
      ]),
    ).toEqual([
      ['setup', 'init', 'Exited', 0],
      ['app', 'app', 'Running', null],
      ['sidecar', 'app', 'Running', null],
    ])

    // The runtime holds the kubelet's labels and podctl's contract annotations.
    const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
    expect(items).toHaveLength(1)
    expect(items[0].labels).toMatchObject({[PodLabel.name]: 'web', [PodLabel.namespace]: namespace, [PodLabel.uid]: pod.uid})
    expect(items[0].annotations).toMatchObject({'io.podctl.restartPolicy': 'Always'})
    const {status: sandboxStatus} = await client.runtime('podSandboxStatus', {podSandboxId: pod.sandboxId})
    expect(sandboxStatus?.metadata).toMatchObject({name: 'web', namespace, uid: pod.uid, attempt: 0})
    const app = pod.containers.find((c: {name: string}) => c.name === 'app')
    const {status} = await client.runtime('containerStatus', {containerId: app.id})
    expect(status?.labels).toEqual({
      [PodLabel.name]: 'web',
      [PodLabel.namespace]: namespace,
      [PodLabel.uid]: pod.uid,
      [ContainerLabel.name]: 'app',
    })
    expect(status?.annotations).toMatchObject({
      'io.kubernetes.container.restartCount': '0',
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.pod.terminationGracePeriod': '2',
      'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","echo bye"]}}',
      'io.kubernetes.container.ports': '[{"name":"http","containerPort":8080,"protocol":"TCP"}]',
      'io.podctl.containerType': 'app',
    })
    expect(status?.annotations['io.kubernetes.container.hash']).toMatch(/^[0-9a-f]+$/)
    expect(status?.logPath).toBe(`${lab().logRoot}/${namespace}_web_${pod.uid}/app/0.log`)

    // Inside: init and postStart wrote to the emptyDir, env references expanded, limits applied, /etc/hosts managed.
    const exec = await client.runtime('execSync', {
      containerId: app.id,
      cmd: ['sh', '-c', 'cat /shared/init.txt /shared/poststart.txt; echo $GREETING; grep -c "Kubernetes-managed" /etc/hosts; hostname'],
      timeout: '10',
    })
    expect(Buffer.from(exec.stdout).toString().split('\n')).toEqual(['from-init', 'from-poststart', 'hello world', '1', 'web', ''])

    // status POD reads what run wrote.
    const described = await podctl(['status', 'web', '-n', namespace, '-o', 'json'], {env})
    expect(described.code, described.stderr).toBe(0)
    expect(JSON.parse(described.stdout)).toMatchObject({phase: 'Running', restartPolicy: 'Always', ip: pod.ip})

    // The emptyDir lives in the pod's directory until kill removes the pod with it.
    expect(existsSync(join(podDirRoot, pod.uid, 'volumes'))).toBe(true)
    const killed = await podctl(['kill', 'web', '-n', namespace], {env})
    expect(killed.code, killed.stderr).toBe(0)
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
    expect(existsSync(join(podDirRoot, pod.uid))).toBe(false)
  })

  it('prints the event timeline and a table on stdout without -o', async () => {
    const namespace = ns('run-table')
    const result = await run(
      [],
      podManifest('plain', namespace, {runtimeClassName: handler, containers: [{name: 'app', command: ['sh', '-c', SERVE]}]}),
    )
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^TYPE\s+REASON\s+AGE\s+OBJECT\s+MESSAGE$/)
    expect(lines).toContainEqual(expect.stringMatching(/^Normal\s+Started\s+(\d+\.\ds|\d+s|\d+m\d+s)\s+app\s+Started container app$/))
    const header = lines.findIndex((line) => line.startsWith('POD '))
    expect(lines[header].split(/\s{2,}/)).toEqual([
      'POD',
      'SANDBOX',
      'ATTEMPT',
      'IP',
      'PHASE',
      'CONTAINER',
      'TYPE',
      'STATE',
      'EXIT',
      'RESTARTS',
      'ID',
    ])
    const pod = String.raw`^plain_${namespace}\s+[0-9a-f]{13}\s+0\s+${podAddressPattern()}\s+Running`
    expect(lines[header + 1]).toMatch(new RegExp(String.raw`${pod}\s+app\s+app\s+Running\s+0\s+[0-9a-f]{13}$`))
    // runtimeClassName is the runtime handler: in the sandbox's runtime_handler on containerd (CRI-O
    // leaves that field empty and names it only in its verbose status), and in podctl pods -o wide on both.
    const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
    expect(items.map((sandbox) => sandbox.runtimeHandler)).toEqual([lab().runtimeName === 'cri-o' ? '' : handler])
    const wide = await podctl(['pods', '-n', namespace, '-o', 'wide'], {env})
    expect(wide.stdout.split('\n')[1]).toMatch(new RegExp(`\\s${handler}(\\s|$)`))
  })

  it('--wait completed returns the container exit code (0 and 3), and --rm removes the pod', async () => {
    const namespace = ns('run-job')
    const ok = await run(
      ['--wait', 'completed', '--quiet', '-o', 'json'],
      podManifest('ok', namespace, {
        restartPolicy: 'Never',
        containers: [{name: 'main', command: ['sh', '-c', 'echo done']}],
      }),
    )
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout).pods[0]).toMatchObject({phase: 'Succeeded', exitCode: 0, removed: false})

    const failing = await run(
      ['--rm', '--quiet', '-o', 'json'],
      podManifest('fails', namespace, {
        restartPolicy: 'Never',
        containers: [
          {name: 'first', command: ['sh', '-c', 'sleep 1; exit 3']},
          {name: 'second', command: ['sh', '-c', 'exit 0']},
        ],
      }),
    )
    expect(failing.code, failing.stderr).toBe(3)
    const [pod] = JSON.parse(failing.stdout).pods
    expect(pod).toMatchObject({phase: 'Failed', exitCode: 3, removed: true})
    expect(pod.containers.map((c: {name: string; exitCode: number}) => [c.name, c.exitCode])).toEqual([
      ['first', 3],
      ['second', 0],
    ])
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
    expect(existsSync(join(podDirRoot, pod.uid))).toBe(false)
    // The completed pod without --rm stays for its logs.
    expect(await sandboxesIn(client, namespace)).toHaveLength(1)

    const conflicting = await run(['--rm', '--wait', 'running'], podManifest('x', namespace, {containers: [{name: 'a'}]}))
    expect(conflicting.code).toBe(2)
    expect(conflicting.stderr).toBe('Error: --rm removes the pod after it completed, so it needs --wait completed, not --wait running\n')
  })

  it('runs and kills a pod whose name has the 253 characters Kubernetes allows (its lock, log directory and links fit)', async () => {
    const namespace = ns('run-long')
    const name = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`
    const started = await run(
      ['--quiet', '-o', 'json'],
      podManifest(name, namespace, {containers: [{name: 'app', command: ['sh', '-c', `echo hello; ${SERVE}`]}]}),
    )
    expect(started.code, started.stderr).toBe(0)
    const [pod] = JSON.parse(started.stdout).pods
    expect(pod).toMatchObject({pod: name, namespace, phase: 'Running'})
    const logs = await podctl(['logs', '-n', namespace, `${name}/app`], {env})
    expect({code: logs.code, stdout: logs.stdout}).toEqual({code: 0, stdout: 'hello\n'})
    const logDirectory = pod.logDirectory as string
    expect(logDirectory.endsWith(`_${pod.uid}`)).toBe(true)
    expect(existsSync(logDirectory)).toBe(true)

    const killed = await podctl(['kill', '-n', namespace, name], {env})
    expect(killed.code, killed.stderr).toBe(0)
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
    expect([existsSync(join(podDirRoot, pod.uid)), existsSync(logDirectory)]).toEqual([false, false])
  })

  it('rolls back a pod whose postStart hook fails: PostStartHookError, exit 14, nothing left', async () => {
    const namespace = ns('run-hook')
    const result = await run(
      ['-o', 'json'],
      podManifest('hooked', namespace, {
        containers: [
          {name: 'app', command: ['sh', '-c', SERVE], lifecycle: {postStart: {exec: {command: ['sh', '-c', 'echo no >&2; exit 7']}}}},
          {name: 'later', command: ['sh', '-c', SERVE]},
        ],
      }),
    )
    expect(result.code).toBe(14)
    expect(result.stderr).toMatch(/^Warning\s+FailedPostStartHook\s+\S+\s+app\s+PostStartHook failed$/m)
    expect(result.stderr).toMatch(/^Normal\s+Killing\s+\S+\s+app\s+/m)
    expect(result.stderr).toContain(
      `Error: pod hooked_${namespace}: PostStartHookError: Exec lifecycle hook ([sh -c echo no >&2; exit 7]) for Container "app"`,
    )
    // Neither container wrote a byte: an empty log directory is not kept, nor pointed at.
    expect(result.stderr).toContain('exited with 7: no (rolled back)\n')
    expect(readdirSync(lab().logRoot).filter((name) => name.startsWith(`${namespace}_hooked_`))).toEqual([])
    // The kubelet's order: the failure stops the pod before the next container is created.
    expect(result.stderr).not.toContain('Created container: later')
    const [pod] = JSON.parse(result.stdout).pods
    expect(pod).toMatchObject({phase: 'Failed', rolledBack: true, error: {code: 'PostStartHookError', exitCode: 14}})
    expect(await sandboxesIn(client, namespace)).toEqual([])
    expect(await leftovers(client, pod.uid)).toEqual({sandboxes: [], containers: []})
    expect(existsSync(join(podDirRoot, pod.uid))).toBe(false)
  })

  it('rolls back on SIGINT while an init container runs, and exits 130', async () => {
    const namespace = ns('run-sigint')
    let signalled = false
    const result = await run(
      [],
      podManifest('slow', namespace, {
        initContainers: [{name: 'wait', command: ['sleep', '20']}],
        containers: [{name: 'main', command: ['sh', '-c', SERVE]}],
      }),
      {
        onSpawn(child) {
          child.stdout?.on('data', (chunk: Buffer) => {
            if (!signalled && chunk.toString().includes('Started container wait')) {
              signalled = true
              setTimeout(() => child.kill('SIGINT'), 300)
            }
          })
        },
      },
    )
    expect(signalled).toBe(true)
    expect(result.code).toBe(130)
    expect(result.stderr).toContain('Interrupted: rolling back (Ctrl-C again to exit at once)')
    expect(result.stdout).toMatch(/^Normal\s+Killing\s+\S+\s+wait\s+Stopping container wait$/m)
    expect(result.stdout).not.toContain('Created container: main')
    // sleep ignores SIGTERM as PID 1: the 2 s grace then SIGKILL, well before the 20 s sleep ends.
    expect(result.ms).toBeLessThan(15_000)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('refuses an existing pod (exit 8) and --replace starts attempt 1 with the same uid', async () => {
    const namespace = ns('run-replace')
    const manifest = podManifest('again', namespace, {containers: [{name: 'app', command: ['sh', '-c', SERVE]}]})
    const first = await run(['-q', '-o', 'json'], manifest)
    expect(first.code, first.stderr).toBe(0)
    const before = JSON.parse(first.stdout).pods[0]

    const refused = await run(['-q'], manifest)
    expect(refused.code).toBe(8)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(
      new RegExp(
        `^Error: pod again_${namespace}: AlreadyExists: pod "again" already exists in namespace "${namespace}" ` +
          String.raw`\(sandbox [0-9a-f]{13}, attempt 0\); pass --replace`,
      ),
    )

    const replaced = await run(['--replace', '-o', 'json'], manifest)
    expect(replaced.code, replaced.stderr).toBe(0)
    expect(replaced.stderr).toMatch(/^Normal\s+SandboxChanged\s+/m)
    const after = JSON.parse(replaced.stdout).pods[0]
    expect(after).toMatchObject({attempt: 1, uid: before.uid, phase: 'Running'})
    expect(after.sandboxId).not.toBe(before.sandboxId)
    // The container continues after the earlier attempt's log file (calcRestartCountByLogDir).
    expect(after.containers[0]).toMatchObject({name: 'app', attempt: 1, state: 'Running'})
    const ids = await sandboxesIn(client, namespace)
    expect(ids).toEqual([after.sandboxId])
  })

  it('refuses invalid and unsupported manifests with one line and creates nothing', async () => {
    const namespace = ns('run-invalid')
    const unsupported = podManifest('bad', namespace, {
      containers: [
        {
          name: 'app',
          volumeDevices: [{name: 'disk', devicePath: '/dev/xvda'}],
        },
      ],
    })
    const refused = await run([], unsupported)
    expect(refused.code).toBe(2)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toBe(
      'Error: <stdin>: spec.containers[0].volumeDevices is not supported on a single node; ' +
        'raw block devices come from PersistentVolumeClaims\n',
    )

    const dir = mkdtempSync(join(tmpdir(), 'podctl-run-invalid-'))
    const file = join(dir, 'pod.yaml')
    writeFileSync(
      file,
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: Bad_Name\n  namespace: ${namespace}\n` +
        `spec:\n  containers:\n  - name: app\n    image: ${busybox}\n`,
    )
    const invalid = await podctl(['run', file], {env})
    expect(invalid.code).toBe(2)
    expect(invalid.stderr).toMatch(
      new RegExp(`^Error: ${file}: metadata\\.name "Bad_Name" is invalid: must be a lowercase RFC 1123 subdomain.*\\n$`),
    )

    writeFileSync(
      file,
      `apiVersion: v1\nkind: Pod\nmetadata: {name: ok, namespace: ${namespace}}\n` +
        `spec:\n  containers:\n  - name: app\n    image: ${busybox}\n    imagePullPolicy: Always\n    comand: [sh]\n`,
    )
    const typo = await podctl(['run', '-f', file], {env})
    expect(typo.code).toBe(2)
    expect(typo.stderr).toBe(`Error: ${file}: spec.containers[0].comand is not a known field; did you mean command?\n`)

    const badImage = await run([], podManifest('img', namespace, {containers: [{name: 'app', image: 'UPPER/Case:1'}]}))
    expect(badImage.code).toBe(11)
    expect(badImage.stderr).toMatch(/^Error: <stdin>: spec\.containers\[0\]\.image: Failed to apply default image tag "UPPER\/Case:1"/)

    const none = await podctl(['run'], {env})
    expect(none.code).toBe(2)
    expect(none.stderr).toBe('Error: no manifest: pass -f pod.yaml (- for stdin), or --pod-config FILE --container-config FILE\n')
    expect(await sandboxesIn(client, namespace)).toEqual([])
    rmSync(dir, {recursive: true, force: true})
  })

  it('--dry-run prints the CRI requests, redacts credentials and creates nothing', async () => {
    const namespace = ns('run-dry')
    const manifest = podManifest('dry', namespace, {containers: [{name: 'app', image: `${lab().registry}/podctl/busybox`}]})
    const result = await run(['--dry-run', '--creds', 'user:secretpass', '-o', 'json'], manifest, {
      // No runtime at all: a dry run must not need one.
      env: {...env, CONTAINER_RUNTIME_ENDPOINT: 'unix:///nonexistent/podctl.sock'},
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).not.toContain('secretpass')
    expect(result.stderr).not.toContain('secretpass')
    const plan = JSON.parse(result.stdout)
    expect(plan.dryRun).toBe(true)
    expect(plan.pods[0].calls.map((call: {rpc: string}) => call.rpc)).toEqual([
      'RuntimeService/RunPodSandbox',
      'RuntimeService/PodSandboxStatus',
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
    ])
    expect(plan.pods[0].calls[2].request.auth).toEqual({username: 'user', password: '<redacted>'})
    expect(plan.pods[0].calls[2].request.image.image).toBe(`${lab().registry}/podctl/busybox:latest`)
    expect(plan.pods[0].calls[0].request.config.labels).toMatchObject({[PodLabel.name]: 'dry', [PodLabel.namespace]: namespace})
    expect(await sandboxesIn(client, namespace)).toEqual([])

    const yaml = await run(['--dry-run', '--auth', Buffer.from('user:secretpass').toString('base64')], manifest)
    expect(yaml.code, yaml.stderr).toBe(0)
    expect(yaml.stdout).toMatch(/^dryRun: true$/m)
    expect(yaml.stdout).toContain('auth: <redacted>')
    expect(yaml.stdout).not.toContain(Buffer.from('user:secretpass').toString('base64'))

    // Both kinds of credentials at once is refused without echoing either secret.
    const both = await run(
      ['--dry-run', '--creds', 'user:secretpass', '--auth', Buffer.from('user:secretpass').toString('base64')],
      manifest,
    )
    expect(both.code).toBe(2)
    expect(both.stderr.trim().split('\n')).toHaveLength(1)
    expect(both.stderr + both.stdout).not.toContain('secretpass')
    expect(both.stderr + both.stdout).not.toContain(Buffer.from('user:secretpass').toString('base64'))
  })

  it('runs every pod of a multi-document manifest', async () => {
    const namespace = ns('run-multi')
    const names = ['one', 'two', 'three']
    const documents = names.map((name) =>
      JSON.stringify(podManifest(name, namespace, {containers: [{name: 'app', command: ['sh', '-c', SERVE]}]})),
    )
    const result = await podctl(['run', '-f', '-', '-q', '-o', 'json', '--parallel', '2'], {env, input: documents.join('\n---\n')})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe('')
    const {pods} = JSON.parse(result.stdout)
    expect(pods.map((pod: {pod: string; phase: string}) => [pod.pod, pod.phase])).toEqual(names.map((name) => [name, 'Running']))
    expect(await sandboxesIn(client, namespace)).toHaveLength(3)
    const killed = await podctl(['kill', '--all', '-n', namespace], {env})
    expect(killed.code, killed.stderr).toBe(0)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('restarts a failing init container with the crash back-off and gives up with CrashLoopBackOff at --timeout', async () => {
    const namespace = ns('run-crash')
    const result = await run(
      ['--timeout', '10s', '-o', 'json'],
      podManifest('crashy', namespace, {
        restartPolicy: 'OnFailure',
        initContainers: [{name: 'flaky', command: ['sh', '-c', 'exit 1']}],
        containers: [{name: 'main', command: ['sh', '-c', SERVE]}],
      }),
    )
    expect(result.code, result.stderr).toBe(14)
    // First restart at once, then back-off windows (shrunk to 300 ms, 600 ms ... by PODCTL_BACKOFF_BASE_MS).
    expect(result.stderr).toMatch(/^Warning\s+BackOff\s+\S+\s+flaky\s+Back-off restarting failed container flaky in pod crashy_/m)
    expect(result.stderr).toMatch(/Error: pod crashy_\S+: CrashLoopBackOff: back-off \S+ restarting failed container=flaky pod=crashy_/)
    const [pod] = JSON.parse(result.stdout).pods
    expect(pod).toMatchObject({rolledBack: true, error: {code: 'CrashLoopBackOff'}})
    expect(await sandboxesIn(client, namespace)).toEqual([])

    const never = await run(
      ['-q'],
      podManifest('once', namespace, {
        restartPolicy: 'Never',
        initContainers: [{name: 'flaky', command: ['sh', '-c', 'exit 4']}],
        containers: [{name: 'main'}],
      }),
    )
    expect(never.code).toBe(14)
    expect(never.stderr).toMatch(
      /Error: pod once_\S+: Init:Error: init container "flaky" exited with code 4 \(Error\) and restartPolicy is Never/,
    )
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('runs crictl pod and container configs with the kubelet labels added', async () => {
    const namespace = ns('run-crictl')
    const dir = mkdtempSync(join(tmpdir(), 'podctl-run-crictl-'))
    writeFileSync(join(dir, 'pod.json'), JSON.stringify({metadata: {name: 'legacy', namespace}, log_directory: join(dir, 'logs')}))
    writeFileSync(
      join(dir, 'ctr.yaml'),
      `metadata: {name: top}\nimage: {image: ${busybox}}\n` +
        `command: [sh, -c, 'trap "exit 0" TERM; while true; do sleep 1; done']\nlog_path: top.log\nenvs: [{key: A, value: b}]\n`,
    )
    const result = await podctl(
      ['run', '--pod-config', join(dir, 'pod.json'), '--container-config', join(dir, 'ctr.yaml'), '-q', '-o', 'json'],
      {env},
    )
    expect(result.code, result.stderr).toBe(0)
    const [pod] = JSON.parse(result.stdout).pods
    expect(pod).toMatchObject({pod: 'legacy', namespace, phase: 'Running', logDirectory: join(dir, 'logs')})
    const {status} = await client.runtime('containerStatus', {containerId: pod.containers[0].id})
    expect(status?.labels).toMatchObject({[PodLabel.name]: 'legacy', [PodLabel.namespace]: namespace, [ContainerLabel.name]: 'top'})
    expect(status?.logPath).toBe(join(dir, 'logs', 'top.log'))
    const found = await podctl(['status', 'legacy', '-n', namespace, '-o', 'json'], {env})
    expect(JSON.parse(found.stdout)).toMatchObject({phase: 'Running', restartPolicy: 'Never'})
    await podctl(['kill', 'legacy', '-n', namespace], {env})
    rmSync(dir, {recursive: true, force: true})
  })
})

describe('podctl run: a pull the registry refuses', () => {
  const typo = busybox.replace(/:[^:/]+$/, ':nope-typo')
  const pod = (namespace: string) =>
    podManifest('typo', namespace, {containers: [{name: 'app', image: typo, command: ['sh', '-c', SERVE]}]})

  it("fails at the registry's first NotFound in its words (exit 10), rolled back, instead of retrying until --timeout", async () => {
    const namespace = ns('run-typo')
    const started = Date.now()
    const result = await run(['--timeout', '2m'], pod(namespace), {timeoutMs: 60_000})
    expect(result.code, result.stderr).toBe(10)
    expect(Date.now() - started).toBeLessThan(30_000)
    // containerd: "…: not found" (gRPC NotFound); CRI-O: the registry's "manifest unknown".
    expect(result.stderr).toMatch(/ErrImagePull: .*nope-typo.*(not found|manifest unknown)/)
    expect(result.stdout.match(/Normal\s+Pulling\s/g)).toHaveLength(1)
    expect(result.stdout).not.toMatch(/\bBackOff\b/)
    expect(await sandboxesIn(client, namespace)).toEqual([])
    // Its log directory held nothing but podctl's mark: it went with the rollback.
    expect(readdirSync(lab().logRoot).filter((name) => name.startsWith(`${namespace}_typo_`))).toEqual([])
  })

  it('--pull-retries 1 asks the registry once more, on the back-off', async () => {
    const namespace = ns('run-typo-retry')
    const result = await run(['--timeout', '2m', '--pull-retries', '1'], pod(namespace), {timeoutMs: 60_000})
    expect(result.code, result.stderr).toBe(10)
    expect(result.stdout.match(/Normal\s+Pulling\s/g)).toHaveLength(2)
    expect(result.stdout.match(/Back-off pulling image/g)).toHaveLength(1)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})
