/**
 * The CRI's newer calls against the fake runtime: runtime-config, metricsp and checkpoint when the
 * runtime answers them (podctl's output and crictl's, byte for byte), and the one-line Unimplemented
 * error (exit 6) when it does not; rmi -q as crictl's --prune.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {PullRecords, pullRecordsDir} from '../../src/lib/images/pull-records.js'
import {ExitCode} from '../../src/lib/errors.js'
import {endpointEnv, podctl} from '../support/podctl.js'
import {socketDir, startFakeRuntime, versionHandler} from '../support/fake-runtime.js'

type Callback = (error: null, response: unknown) => void

const dir = socketDir()
const newer = join(dir, 'newer.sock')
const older = join(dir, 'older.sock')
const env = endpointEnv()
// An empty crictl config: crictl warns on every command when /etc/crictl.yaml is missing.
const crictlConfig = join(socketDir(), 'crictl.yaml')
writeFileSync(crictlConfig, '')
const asCrictl = {...env, PODCTL_PERSONALITY: 'crictl', CRI_CONFIG_FILE: crictlConfig}
const stops: Array<() => Promise<void>> = []
const checkpointed: Array<{containerId: string; location: string}> = []

const POD = 'aaaa1111bbbb2222cccc3333'
const APP = 'cccc3333dddd4444eeee5555'
const SIDE = 'cccc9999dddd4444eeee5555'

const metrics = {
  podMetrics: [
    {
      podSandboxId: POD,
      metrics: [{name: 'container_network_receive_bytes_total', timestamp: '1700000000', labelValues: ['eth0'], value: {value: '2048'}}],
      containerMetrics: [
        {
          containerId: APP,
          metrics: [
            {name: 'container_memory_usage_bytes', timestamp: '1700000000', metricType: 'GAUGE', labelValues: [], value: {value: '4096'}},
          ],
        },
      ],
    },
  ],
}

const descriptors = {
  descriptors: [
    {name: 'container_network_receive_bytes_total', help: 'Bytes received', labelKeys: ['interface']},
    {name: 'container_memory_usage_bytes', help: 'Memory in use', labelKeys: []},
  ],
}

const containers = {
  containers: [
    {id: APP, podSandboxId: POD, metadata: {name: 'app', attempt: 0}, state: 'CONTAINER_RUNNING', createdAt: '2'},
    {id: SIDE, podSandboxId: POD, metadata: {name: 'side', attempt: 0}, state: 'CONTAINER_RUNNING', createdAt: '1'},
  ],
}

beforeAll(async () => {
  const runtime = {
    version: versionHandler,
    runtimeConfig: (_call: unknown, cb: Callback) => cb(null, {linux: {cgroupDriver: 'SYSTEMD'}}),
    listPodSandboxMetrics: (_call: unknown, cb: Callback) => cb(null, metrics),
    listMetricDescriptors: (_call: unknown, cb: Callback) => cb(null, descriptors),
    listContainers: (_call: unknown, cb: Callback) => cb(null, containers),
    checkpointContainer(call: {request: {containerId: string; location: string}}, cb: Callback) {
      checkpointed.push({containerId: call.request.containerId, location: call.request.location})
      cb(null, {})
    },
  }
  // containerd 1.6's answer to all three: only what it has.
  const old = {version: versionHandler, listContainers: (_call: unknown, cb: Callback) => cb(null, containers)}
  const images = {
    listImages: (_call: unknown, cb: Callback) =>
      cb(null, {
        images: [
          {id: `sha256:${'1'.repeat(64)}`, repoTags: ['localhost:5000/used:v1']},
          {id: `sha256:${'2'.repeat(64)}`, repoTags: ['localhost:5000/unused:v1']},
        ],
      }),
  }
  stops.push(await startFakeRuntime(newer, runtime as never, images as never), await startFakeRuntime(older, old as never))
})

afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()))
})

describe('runtime-config', () => {
  it("prints crictl's line as podctl and as crictl, and the CRI answer as JSON", async () => {
    const [table, crictl, json] = await Promise.all([
      podctl(['-r', newer, 'runtime-config'], {env}),
      podctl(['-r', newer, 'runtime-config'], {env: asCrictl}),
      podctl(['-r', newer, 'runtime-config', '-o', 'json'], {env}),
    ])
    expect(table).toMatchObject({code: 0, stdout: 'cgroup driver:   SYSTEMD\n', stderr: ''})
    expect(crictl).toMatchObject({code: 0, stdout: 'cgroup driver:   SYSTEMD\n', stderr: ''})
    expect(JSON.parse(json.stdout)).toEqual({linux: {cgroupDriver: 'SYSTEMD'}})
  })
})

describe('metricsp', () => {
  it('a table row per sample, with the label names from ListMetricDescriptors', async () => {
    const result = await podctl(['-r', newer, 'metricsp'], {env})
    expect(result).toMatchObject({code: 0, stderr: ''})
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      'POD ID          CONTAINER       METRIC                                  TYPE      LABELS           VALUE',
      'aaaa1111bbbb2                   container_network_receive_bytes_total   COUNTER   interface=eth0   2048',
      'aaaa1111bbbb2   cccc3333dddd4   container_memory_usage_bytes            GAUGE                      4096',
    ])
  })

  it("as crictl: protojson's JSON by default (an empty list as []), YAML with sorted keys", async () => {
    const [json, yaml] = await Promise.all([
      podctl(['-r', newer, 'metricsp'], {env: asCrictl}),
      podctl(['-r', newer, 'metricsp', '-o', 'yaml'], {env: asCrictl}),
    ])
    expect(json).toMatchObject({code: 0, stderr: ''})
    expect(json.stdout).toBe(
      `{
  "podMetrics": [
    {
      "podSandboxId": "${POD}",
      "metrics": [
        {
          "name": "container_network_receive_bytes_total",
          "timestamp": "1700000000",
          "metricType": "COUNTER",
          "labelValues": [
            "eth0"
          ],
          "value": {
            "value": "2048"
          }
        }
      ],
      "containerMetrics": [
        {
          "containerId": "${APP}",
          "metrics": [
            {
              "name": "container_memory_usage_bytes",
              "timestamp": "1700000000",
              "metricType": "GAUGE",
              "labelValues": [],
              "value": {
                "value": "4096"
              }
            }
          ]
        }
      ]
    }
  ]
}
`,
    )
    expect(yaml.stdout).toBe(
      `podMetrics:
- containerMetrics:
  - containerId: ${APP}
    metrics:
    - labelValues: []
      metricType: GAUGE
      name: container_memory_usage_bytes
      timestamp: "1700000000"
      value:
        value: "4096"
  metrics:
  - labelValues:
    - eth0
    metricType: COUNTER
    name: container_network_receive_bytes_total
    timestamp: "1700000000"
    value:
      value: "2048"
  podSandboxId: ${POD}

`,
    )
  })

  it('-w prints again until Ctrl-C, then exits 0', async () => {
    const result = await podctl(['-r', newer, 'metricsp', '-w', '-o', 'json'], {
      env,
      onSpawn(child) {
        let seen = ''
        // Two documents are two answers: the watch asked again; then the interrupt.
        child.stdout?.on('data', (chunk) => {
          seen += chunk
          if (seen.split('"podMetrics"').length > 2) child.kill('SIGINT')
        })
      },
    })
    expect(result.code).toBe(0)
    expect(result.stdout.split('"podMetrics"').length).toBeGreaterThan(2)
  })
})

describe('checkpoint', () => {
  it('sends the archive as an absolute path and prints the ID; -e is required; one container per archive', async () => {
    checkpointed.length = 0
    const ok = await podctl(['-r', newer, 'checkpoint', 'cccc3333', '-e', 'app.tar'], {env})
    expect(ok).toMatchObject({code: 0, stdout: `${APP}\n`, stderr: ''})
    expect(checkpointed).toEqual([{containerId: APP, location: join(process.cwd(), 'app.tar')}])
    const [noExport, noId, two] = await Promise.all([
      podctl(['-r', newer, 'checkpoint', 'cccc3333'], {env}),
      podctl(['-r', newer, 'checkpoint', '-e', '/tmp/a.tar'], {env}),
      podctl(['-r', newer, 'checkpoint', 'cccc3333', 'cccc9999', '-e', '/tmp/a.tar'], {env}),
    ])
    expect(noExport).toMatchObject({
      code: ExitCode.USAGE,
      stderr: 'Error: checkpoint needs --export (-e): the tar archive to write the checkpoint to, e.g. --export=/tmp/web.tar\n',
    })
    expect(noId).toMatchObject({code: ExitCode.USAGE, stdout: ''})
    expect(noId.stderr).toMatch(/^Error: checkpoint needs a CONTAINER/)
    expect(two).toMatchObject({
      code: ExitCode.USAGE,
      stderr: 'Error: --export names one archive, and 2 containers would overwrite it; checkpoint one container per call\n',
    })
    expect(checkpointed).toHaveLength(1)
  })

  it('as crictl: the IDs go as given and are printed as given', async () => {
    checkpointed.length = 0
    const result = await podctl(['-r', newer, 'checkpoint', '--export=/tmp/b.tar', 'cccc3333', 'cccc9999'], {env: asCrictl})
    expect(result).toMatchObject({code: 0, stdout: 'cccc3333\ncccc9999\n', stderr: ''})
    expect(checkpointed).toEqual([
      {containerId: 'cccc3333', location: '/tmp/b.tar'},
      {containerId: 'cccc9999', location: '/tmp/b.tar'},
    ])
  })
})

describe('a runtime without the newer calls (containerd 1.6)', () => {
  it('one line naming the runtime and the RPC, exit 6, nothing on stdout', async () => {
    const [config, metricsp, checkpoint, crictl] = await Promise.all([
      podctl(['-r', older, 'runtime-config'], {env}),
      podctl(['-r', older, 'metricsp'], {env}),
      podctl(['-r', older, 'checkpoint', 'cccc3333', '-e', '/tmp/c.tar'], {env}),
      podctl(['-r', older, 'checkpoint', '-e', '/tmp/c.tar', 'cccc3333', 'cccc9999'], {env: asCrictl}),
    ])
    expect(config).toEqual(
      expect.objectContaining({
        code: ExitCode.UNIMPLEMENTED,
        stdout: '',
        stderr: "Error: fake 1.0 does not implement RuntimeConfig (the CRI's RuntimeConfig needs containerd 2.0+ or CRI-O 1.28+)\n",
      }),
    )
    const metricsNeed = "the CRI's pod metrics API is newer than containerd 1.x; statsp shows CPU and memory"
    expect(metricsp).toEqual(
      expect.objectContaining({
        code: ExitCode.UNIMPLEMENTED,
        stdout: '',
        stderr: `Error: fake 1.0 does not implement ListPodSandboxMetrics (${metricsNeed})\n`,
      }),
    )
    const checkpointLine =
      "Error: fake 1.0 does not implement CheckpointContainer (the CRI's checkpoint API needs containerd 1.7+ or CRI-O 1.25+)\n"
    expect(checkpoint).toEqual(expect.objectContaining({code: ExitCode.UNIMPLEMENTED, stdout: '', stderr: checkpointLine}))
    // As crictl: the first ID's failure ends it, in crictl's words, as logrus' error line, exit 1.
    expect(crictl).toEqual(
      expect.objectContaining({
        code: 1,
        stdout: '',
        stderr: expect.stringMatching(
          /^time="[^"]+" level=error msg="checkpointing the container \\"cccc3333\\" failed: rpc error: code = Unimplemented desc = .*"\n$/,
        ),
      }),
    )
  })
})

describe('rmi -q', () => {
  it("is crictl's short form of --prune", async () => {
    // As podctl, --prune takes the images podctl pulled: both, recorded as its image manager records them.
    const pulls = new PullRecords(pullRecordsDir(join(dir, 'pods'), newer))
    for (const [digit, name] of [
      ['1', 'used'],
      ['2', 'unused'],
    ])
      await pulls.record({
        imageId: `sha256:${digit.repeat(64)}`,
        imageRef: `sha256:${digit.repeat(64)}`,
        image: `localhost:5000/${name}:v1`,
        pulledMs: 0,
      })
    const rmiEnv = {...env, PODCTL_POD_DIR_ROOT: join(dir, 'pods')}
    const [dryRun, withImage] = await Promise.all([
      podctl(['-r', newer, 'rmi', '-q', '--dry-run'], {env: rmiEnv}),
      podctl(['-r', newer, 'rmi', '-q', 'localhost:5000/used:v1'], {env: rmiEnv}),
    ])
    expect(dryRun.code, dryRun.stderr).toBe(0)
    expect(dryRun.stdout).toBe('Would delete: localhost:5000/used:v1\nWould delete: localhost:5000/unused:v1\n')
    expect(withImage).toMatchObject({
      code: ExitCode.USAGE,
      stderr: 'Error: --prune takes no IMAGE arguments; drop localhost:5000/used:v1 or the flag\n',
    })
  })
})
