import {mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {generateContainerConfig} from '../../../../src/lib/kubelet/kuberuntime/container-config.js'
import {generatePodSandboxConfig} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {
  ensureUserNamespace,
  kubeletIdRange,
  recordedUserNamespace,
  USER_NAMESPACE_LENGTH,
  usernsOptions,
} from '../../../../src/lib/kubelet/kuberuntime/user-namespace.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'

const root = () => mkdtempSync(join(tmpdir(), 'podctl-userns-'))

async function userPod(uid: string) {
  const text = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop, uid: ${uid}}
spec:
  hostUsers: false
  containers: [{name: app, image: busybox:1.36}]
`
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml')
}

describe('user namespaces (hostUsers: false)', () => {
  it("gives each pod 65536 IDs of its own from the kubelet's default range, recorded in its directory", async () => {
    const pods = root()
    const first = await ensureUserNamespace(pods, {uid: 'a'})
    expect(first).toEqual({
      uidMappings: [{hostId: 65_536, containerId: 0, length: USER_NAMESPACE_LENGTH}],
      gidMappings: [{hostId: 65_536, containerId: 0, length: USER_NAMESPACE_LENGTH}],
    })
    expect(JSON.parse(readFileSync(join(pods, 'a', 'userns'), 'utf8'))).toEqual(first)
    // The same pod keeps its range; another gets the next one; a freed range is taken again.
    expect(await ensureUserNamespace(pods, {uid: 'a'})).toEqual(first)
    expect((await ensureUserNamespace(pods, {uid: 'b'})).uidMappings[0].hostId).toBe(2 * 65_536)
    expect(recordedUserNamespace(pods, 'c')).toBeUndefined()
  })

  it("reads the kubelet user's subordinate range, and refuses ranges for users and groups that differ", () => {
    const dir = root()
    const [subuid, subgid] = [join(dir, 'subuid'), join(dir, 'subgid')]
    writeFileSync(subuid, 'alice:100000:65536\nkubelet:1000000:6553600\n')
    writeFileSync(subgid, 'kubelet:1000000:6553600\n')
    expect(kubeletIdRange({subuid, subgid})).toEqual({first: 1_000_000, length: 6_553_600})
    writeFileSync(subgid, 'kubelet:2000000:6553600\n')
    expect(() => kubeletIdRange({subuid, subgid})).toThrow(/differ/)
    expect(kubeletIdRange({subuid: join(dir, 'none'), subgid: join(dir, 'none')})).toEqual({first: 65_536, length: 2 ** 32 - 65_536})
  })

  it('sends the recorded mappings in the sandbox config and every container config (the kubelet namespacesForPod)', async () => {
    const pods = root()
    const pod = await userPod('u1')
    const options = {attempt: 0, logsRoot: '/logs', hostResolvConf: '', podDirRoot: pods}
    // Nothing recorded yet (a dry run): no user namespace in the config.
    expect(generatePodSandboxConfig(pod, options).linux?.securityContext?.namespaceOptions?.usernsOptions).toBeUndefined()
    mkdirSync(join(pods, 'u1'), {recursive: true})
    const mappings = await ensureUserNamespace(pods, pod)
    const sandbox = generatePodSandboxConfig(pod, options)
    expect(sandbox.linux?.securityContext?.namespaceOptions).toEqual({
      network: 'POD',
      pid: 'CONTAINER',
      ipc: 'POD',
      usernsOptions: {mode: 'POD', uids: mappings.uidMappings, gids: mappings.gidMappings},
    })
    const container = generateContainerConfig(pod, pod.containers[0], {
      type: 'app',
      attempt: 0,
      imageRef: 'sha256:x',
      volumePaths: new Map(),
      nodeMemoryBytes: 1024 ** 3,
      usernsOptions: usernsOptions(mappings),
    })
    expect(container.linux?.securityContext?.namespaceOptions?.usernsOptions).toEqual(usernsOptions(mappings))
  })
})
