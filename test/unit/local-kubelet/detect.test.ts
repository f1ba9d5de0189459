import {rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {kubeletOfRuntime} from '../../../src/lib/local-kubelet/detect.js'
import {refuseBesideKubelet} from '../../../src/lib/local-kubelet/runtime-owner.js'
import {type StandIn, startKubeletStandIn, useStandInRuntimeSocket} from '../../support/kubelet-stand-in.js'

const runtimeSocket = useStandInRuntimeSocket('podctl-detect-')
const noOrphan = {rootDir: '/nonexistent-kubelet-root'}
let dir: string
let socket: string
beforeAll(() => {
  ;({dir, socket} = runtimeSocket)
})

async function withStandIn(flags: (dir: string) => string[], check: (kubelet: StandIn) => Promise<void>): Promise<void> {
  const kubelet = await startKubeletStandIn(flags)
  try {
    await check(kubelet)
  } finally {
    await kubelet.stop()
  }
}

describe('kubeletOfRuntime', () => {
  it('finds nothing on a machine without a kubelet, quickly', async () => {
    await kubeletOfRuntime(`unix://${socket}`, noOrphan)
    const started = performance.now()
    expect(await kubeletOfRuntime(`unix://${socket}`, noOrphan)).toBeUndefined()
    // A few ms on a machine with a few hundred processes; the bound only catches a slow path taken by mistake.
    expect(performance.now() - started).toBeLessThan(200)
  })

  it('names a kubelet whose --container-runtime-endpoint is the socket (through a symlink too)', async () => {
    const link = join(dir, 'link.sock')
    symlinkSync(socket, link)
    try {
      await withStandIn(
        () => ['--container-runtime-endpoint', `unix://${link}`],
        async (kubelet) => {
          const found = await kubeletOfRuntime(socket, noOrphan)
          expect(found).toMatchObject({pid: kubelet.pid, evidence: 'its --container-runtime-endpoint'})
        },
      )
    } finally {
      rmSync(link)
    }
  })

  it("names a kubelet whose --config file's containerRuntimeEndpoint is the socket, and reads staticPodPath from it", async () => {
    await withStandIn(
      (scratch) => {
        writeFileSync(
          join(scratch, 'config.yaml'),
          'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n' +
            `containerRuntimeEndpoint: unix://${socket}\nstaticPodPath: ${scratch}/manifests\n`,
        )
        return [`--config=${join(scratch, 'config.yaml')}`, '--hostname-override', 'Node-A']
      },
      async (kubelet) => {
        const found = await kubeletOfRuntime(`unix://${socket}`, noOrphan)
        expect(found?.pid).toBe(kubelet.pid)
        expect(found?.evidence).toBe(`containerRuntimeEndpoint in its --config ${join(kubelet.dir, 'config.yaml')}`)
        expect(found?.settings).toMatchObject({staticPodPath: `${kubelet.dir}/manifests`, staticPodSource: 'config', nodeName: 'node-a'})
      },
    )
  })

  it('names a kubelet that holds a connection to the socket whatever its flags say', async () => {
    await withStandIn(
      () => ['--connect', socket, '--container-runtime-endpoint', 'unix:///run/other.sock'],
      async (kubelet) => {
        expect(await kubeletOfRuntime(`unix://${socket}`, noOrphan)).toMatchObject({
          pid: kubelet.pid,
          evidence: 'it holds a connection to the runtime socket',
        })
      },
    )
  })

  it('leaves alone a kubelet of another runtime', async () => {
    await withStandIn(
      () => ['--container-runtime-endpoint', 'unix:///run/other.sock'],
      async () => {
        expect(await kubeletOfRuntime(`unix://${socket}`, noOrphan)).toBeUndefined()
      },
    )
  })

  it('with no kubelet process in sight, takes an answering pod-resources socket for a kubelet, a silent one for none', async () => {
    await withStandIn(
      (scratch) => ['--root-dir', join(scratch, 'root')],
      async (kubelet) => {
        // The stand-in is a kubelet process of another runtime here; the orphan check is about a root dir alone.
        const options = {rootDir: join(kubelet.dir, 'root'), procRoot: join(kubelet.dir, 'no-proc')}
        const found = await kubeletOfRuntime(`unix://${socket}`, options)
        expect(found?.pid).toBeUndefined()
        expect(found?.evidence).toBe(`its pod-resources socket ${kubelet.dir}/root/pod-resources/kubelet.sock accepts connections`)
      },
    )
    // The socket file stays after the kubelet stops; nothing accepts on it.
    const stale = join(dir, 'stale')
    expect(await kubeletOfRuntime(`unix://${socket}`, {rootDir: stale, procRoot: join(dir, 'no-proc')})).toBeUndefined()
  })
})

describe('refuseBesideKubelet', () => {
  const warnings: string[] = []
  const warn = (line: string) => warnings.push(line)
  const runtime = () => ({runtimeEndpoint: `unix://${socket}`})

  it('refuses with exit 17, the pid, the reason and the two ways out; with force it only warns', async () => {
    await withStandIn(
      () => ['--container-runtime-endpoint', socket],
      async (kubelet) => {
        const refused = refuseBesideKubelet(runtime(), {force: false, warn}, noOrphan)
        await expect(refused).rejects.toMatchObject({
          code: 'KubeletOwnsRuntime',
          exitCode: 17,
          message:
            `kubelet pid ${kubelet.pid} uses the runtime at unix://${socket} (its --container-runtime-endpoint): it kills every pod ` +
            'it did not start within about 2 s, so nothing was created; ' +
            'hand the pod to the kubelet with --static, or run anyway with --force',
        })
        const owner = await refuseBesideKubelet(runtime(), {force: true, warn}, noOrphan)
        expect(warnings).toEqual([
          expect.stringMatching(new RegExp(`^--force: kubelet pid ${kubelet.pid} uses this runtime and will kill`)),
        ])
        // A supervisor goes on past the kubelet --force went past.
        expect(await owner()).toBeUndefined()
      },
    )
    const owner = await refuseBesideKubelet(runtime(), {force: false, warn}, noOrphan)
    expect(await owner()).toBeUndefined()
    // A kubelet that comes later is one a supervisor pauses for.
    await withStandIn(
      () => ['--container-runtime-endpoint', socket],
      async (kubelet) => {
        expect(await owner()).toBe(`kubelet pid ${kubelet.pid} uses the runtime at unix://${socket} (its --container-runtime-endpoint)`)
      },
    )
    expect(warnings).toHaveLength(1)
  })
})
