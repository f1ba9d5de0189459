/* eslint-disable @stylistic/max-len -- the replayed command lines are kept whole, as their scripts write them */
/**
 * Issue 34's replay: crictl command lines as public scripts, tests and runbooks run them, each with
 * its consumer's own parsing (jq, awk, grep, cut, head), replayed on the lab against `bin/crictl` and,
 * where the reference crictl v1.37.0 is built, against it too. Each must succeed (or fail) as crictl
 * does and the consumer must read the same answer. Sources, as found in public code:
 *   cri-o's tests (test/*.bats): `crictl images -o json | jq ".images[] | select(.repoTags[] == …) |.pinned"`,
 *     `crictl inspecti IMG | jq -e .status.id`, `crictl inspect CTR | jq -e '.status.mounts[0]…'`;
 *   AKS node image build: `crictl images -o json | jq '[.images | .[] | {id:.id, repoTags:.repoTags, repoDigests:.repoDigests}]'`;
 *   a k3s clean-up script: `crictl ps -o json | jq -r '.containers[].imageRef' | sort`;
 *   Kubernetes' docs (pod cgroups): `crictl pods --name test-pod -q`, `crictl inspectp -o=json $POD_ID | grep cgroupsPath`;
 *   debugging runbooks: `crictl inspect --output go-template --template '{{.info.pid}}' CID`,
 *     `crictl ps | grep NAME | awk '{print $1}'`, `crictl pods --name NAME -s Ready -q | head -1`,
 *     `crictl pods --namespace NS --name NAME -q`, `crictl pods --name "^NAME$" --namespace NS -q | head -1`,
 *     `crictl ps --pod "$(crictl pods --name NAME -q)" -q`, `crictl inspect CID | grep '"pid"' | head -1 | grep -o '[0-9]*'`,
 *     go-templates with `index .info.config.labels "io.kubernetes.pod.name"`;
 *   minikube and image pre-checks: `crictl inspecti IMG >/dev/null 2>&1 || fail`, `crictl images --digests`.
 * Invocations that would change what other tests use (rmi, rmp -a, stopp of others' pods) are left out.
 */
import {execFile} from 'node:child_process'
import {chmodSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../src/lib/cri/client.js'
import {createContainer, ensureImage} from '../support/inspect-fixtures.js'
import {cleanupNamespace, createSandbox, lab, labClient, referenceCrictl, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {ROOT} from '../support/podctl.js'

const REFERENCE = referenceCrictl()
if (!REFERENCE) console.warn('test/e2e/crictl-replay.test.ts: no reference crictl v1.37.0; replaying against bin/crictl only')

interface Outcome {
  code: number
  stdout: string
}

/** One replayed line: the script (crictl as on a node), and what its consumer must read (from the objects this file made). */
interface Replay {
  script: string
  expected?: (ids: Ids) => string | RegExp
  /** The script must fail (a consumer's `||` branch). */
  fails?: boolean
}

interface Ids {
  ns: string
  pod: string
  app: string
  imageId: string
  busybox: string
  pid: string
}

const REPLAYS: Replay[] = [
  {script: 'crictl pods --name "^web-$NS$" -q', expected: ({pod}) => `${pod}\n`},
  {script: 'crictl pods --namespace "$NS" --name "web-$NS" -q', expected: ({pod}) => `${pod}\n`},
  {script: 'crictl pods --name "^web-$NS$" --namespace "$NS" -q 2>/dev/null | head -1', expected: ({pod}) => `${pod}\n`},
  {script: 'crictl pods --name "web-$NS" -s Ready -q | head -1', expected: ({pod}) => `${pod}\n`},
  {script: 'crictl pods --namespace "$NS" -o json | jq -r ".items[].metadata.name"', expected: ({ns}) => `web-${ns}\n`},
  {script: 'crictl pods --namespace "$NS" | awk \'NR>1 {print $1}\'', expected: ({pod}) => `${pod.slice(0, 13)}\n`},
  {script: 'crictl pods --namespace "$NS" | grep -c Ready', expected: () => '1\n'},
  {script: 'crictl ps --pod "$(crictl pods --name "^web-$NS$" -q)" -q', expected: ({app}) => `${app}\n`},
  {script: 'crictl ps --namespace "$NS" -q', expected: ({app}) => `${app}\n`},
  {script: 'crictl ps --name "^app-$NS$" | grep "app-$NS" | awk \'{print $1}\'', expected: ({app}) => `${app.slice(0, 13)}\n`},
  {script: 'crictl ps -a --name "app-$NS" -o json | jq -r ".containers[].imageRef"', expected: ({imageId}) => `${imageId}\n`},
  {
    script: String.raw`crictl ps -o json --namespace "$NS" | jq -r ".containers[].labels[\"io.kubernetes.pod.namespace\"]"`,
    expected: ({ns}) => `${ns}\n`,
  },
  {script: 'crictl inspect --output go-template --template \'{{.info.pid}}\' "$APP"', expected: ({pid}) => `${pid}\n`},
  {script: 'crictl inspect "$APP" | grep \'"pid"\' | head -1 | grep -o \'[0-9]*\'', expected: ({pid}) => `${pid}\n`},
  {script: 'crictl inspect "$APP" | jq -r .status.state', expected: () => 'CONTAINER_RUNNING\n'},
  {script: 'crictl inspect "$APP" | jq -e ".status.mounts | length"', expected: () => '0\n'},
  {
    script:
      'crictl inspect -o go-template --template \'{{ index .info.config.labels "io.kubernetes.pod.namespace"}}/{{.status.metadata.name}}\' "$APP"',
    expected: ({ns}) => `${ns}/app-${ns}\n`,
  },
  {script: 'crictl inspect -o go-template --template \'{{index .status.labels "nokey"}}\' "$APP"', expected: () => '<no value>\n'},
  {script: 'crictl inspectp -o=json "$POD" | grep -c cgroupsPath', expected: () => /^\d+\n$/},
  {script: 'crictl inspectp "$POD" | jq -r .status.metadata.namespace', expected: ({ns}) => `${ns}\n`},
  {script: 'crictl inspectp --namespace "$NS" -o go-template --template "{{.status.state}}"', expected: () => 'SANDBOX_READY\n'},
  {script: String.raw`crictl images -o json | jq -r ".images[] | select(.repoTags[] == \"$BUSYBOX\") |.pinned"`, expected: () => 'false\n'},
  {
    script: String.raw`crictl images -o json | jq -c "[.images | .[] | {id:.id, repoTags:.repoTags}] | map(select(.id == \"$IMAGE\")) | length"`,
    expected: () => '1\n',
  },
  {script: 'crictl images -q | grep -c "$IMAGE"', expected: () => '1\n'},
  // containerd 1.6 ignores the REPOSITORY filter and lists every image, for crictl too.
  {script: 'crictl images --digests "$BUSYBOX" | awk \'NR>1 && $2 == "1.36" {print $1}\'', expected: () => /podctl\/busybox\n/},
  {script: 'crictl images --filter "reference=podctl/busybox" -q | grep -c "$IMAGE"', expected: () => '1\n'},
  {script: 'crictl inspecti "$BUSYBOX" | jq -e -r .status.id', expected: ({imageId}) => `${imageId}\n`},
  {script: 'crictl inspecti "$BUSYBOX" >/dev/null 2>&1 && echo present', expected: () => 'present\n'},
  {script: 'crictl inspecti localhost:5000/podctl/no-such-image:0 >/dev/null 2>&1 || echo missing', expected: () => 'missing\n'},
  {script: "crictl version | awk '/RuntimeName/ {print $2}'", expected: () => 'containerd\n'},
  {script: "crictl --version | awk '{print $3}'", expected: () => 'v1.37.0\n'},
  {script: String.raw`crictl info | jq -r ".status.conditions[] | select(.type==\"RuntimeReady\") | .status"`, expected: () => 'true\n'},
  {
    script: 'crictl info -o go-template --template "{{range .status.conditions}}{{.type}} {{end}}"',
    // containerd 2.x adds conditions of its own (ContainerdHasNoDeprecationWarnings) after the two CRI ones.
    expected: () => /^RuntimeReady NetworkReady (\w+ )*\n$/,
  },
  {script: 'crictl exec -s "$APP" cat /etc/hostname | head -1 | wc -l', expected: () => '1\n'},
  {script: 'crictl exec --name "^app-$NS$" -q -s echo hi | grep -c hi', expected: () => '1\n'},
  {script: 'crictl logs "$APP" 2>&1 | head -1', expected: () => 'started\n'},
  {script: 'crictl stats -o json --id "$APP" | jq -r ".stats[].attributes.metadata.name"', expected: ({ns}) => `app-${ns}\n`},
  {script: 'crictl pods --name "(a+)+$" -q | wc -l', expected: () => /^\s*\d+\n$/},
  {script: 'crictl ps --state bogus', fails: true},
]

function run(dir: string, script: string, ids: Ids): Promise<Outcome> {
  const env = {
    PATH: `${dir}:${process.env.PATH}`,
    HOME: dir,
    TZ: 'UTC',
    NS: ids.ns,
    POD: ids.pod,
    APP: ids.app,
    IMAGE: ids.imageId,
    BUSYBOX: ids.busybox,
  }
  return new Promise((resolve) => {
    execFile('sh', ['-c', script], {env, timeout: 60_000}, (error, stdout) => resolve({code: error ? Number(error.code ?? 1) : 0, stdout}))
  })
}

/** A directory whose `crictl` is `program` with the lab's endpoint and an empty config, as a node's crictl.yaml would set. */
function shim(program: string, config: string, launcher: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'crictl-replay-'))
  const endpoint = lab().endpoint
  writeFileSync(
    join(dir, 'crictl'),
    `#!/bin/sh\nexec ${[...launcher, program].join(' ')} --config ${config} -r ${endpoint} -i ${endpoint} -t 30s "$@"\n`,
  )
  chmodSync(join(dir, 'crictl'), 0o755)
  return dir
}

describe('real crictl invocations, replayed with their consumers', () => {
  let client: CriClient
  const ns = uniqueNamespace('e2e-replay')
  const work = mkdtempSync(join(tmpdir(), 'crictl-replay-config-'))
  const config = join(work, 'crictl.yaml')
  let ours = ''
  let theirs = ''
  const ids: Ids = {ns, pod: '', app: '', imageId: '', busybox: lab().busybox, pid: ''}

  beforeAll(async () => {
    writeFileSync(config, '')
    ours = shim(`${ROOT}bin/crictl`, config, [process.execPath])
    if (REFERENCE) theirs = shim(REFERENCE, config, [])
    client = labClient()
    ids.imageId = await ensureImage(client, lab().busybox)
    ids.pod = await createSandbox(client, {name: `web-${ns}`, namespace: ns})
    ids.app = await createContainer(client, {podId: ids.pod, name: `app-${ns}`, command: ['sh', '-c', 'echo started; sleep 3600']})
    const {info} = await client.runtime('containerStatus', {containerId: ids.app, verbose: true})
    ids.pid = String((JSON.parse(info.info) as {pid: number}).pid)
  })

  afterAll(async () => {
    await cleanupNamespace(client, ns)
    expect(await sandboxesIn(client, ns)).toEqual([])
    client.close()
    for (const dir of [ours, theirs, work]) if (dir) rmSync(dir, {recursive: true, force: true})
  })

  it.each(REPLAYS.map((replay) => [replay.script, replay] as const))('%s', async (script, replay) => {
    const mine = await run(ours, script, ids)
    if (replay.fails) expect(mine.code).not.toBe(0)
    else expect(mine.code).toBe(0)
    if (replay.expected) {
      const expected = replay.expected(ids)
      if (typeof expected === 'string') expect(mine.stdout).toBe(expected)
      else expect(mine.stdout).toMatch(expected)
    }

    if (!REFERENCE) return
    const reference = await run(theirs, script, ids)
    expect({code: reference.code === 0, stdout: reference.stdout}).toEqual({code: mine.code === 0, stdout: mine.stdout})
  })
})
