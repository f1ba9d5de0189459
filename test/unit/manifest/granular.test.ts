import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode} from '../../../src/lib/errors.js'
import {loadContainerInput, loadSandboxInput} from '../../../src/lib/manifest/granular.js'
import {FULL} from '../../support/pod-manifest.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-granular-'))
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

describe('loadSandboxInput', () => {
  it('tells a Pod manifest from a crictl pod config by kind/apiVersion', async () => {
    const manifest = await loadSandboxInput(file('pod.yaml', FULL))
    expect(manifest).toMatchObject({form: 'manifest', pod: {name: 'web', namespace: 'shop'}, ports: []})
    const crictl = await loadSandboxInput(
      file(
        'sb.yaml',
        'metadata: {name: box, uid: u1}\nport_mappings: [{container_port: 80, host_port: 8080}]\nlinux: {namespaces: {options: {}}}\n',
      ),
    )
    expect(crictl).toMatchObject({form: 'crictl', pod: {name: 'box', namespace: 'default', uid: 'u1', containers: []}})
    expect(crictl.ports).toEqual([{containerPort: 80, hostPort: 8080, protocol: 'TCP', hostIP: undefined}])
  })

  it('refuses several documents, naming the file', async () => {
    await expect(loadSandboxInput(file('two.yaml', `${FULL}\n---\n${FULL}`))).rejects.toThrow(/two\.yaml: must hold exactly one document/)
  })
})

describe('loadContainerInput', () => {
  it('picks a manifest container with the volumes it mounts; several need --container', async () => {
    const path = file('pod.yaml', FULL)
    const app = await loadContainerInput(path, 'app')
    expect(app.container.name).toBe('app')
    expect(app.volumes.map((volume) => volume.name)).toEqual(['cache', 'config'])
    expect(app.pod?.terminationGracePeriodSeconds).toBe(15)
    const init = await loadContainerInput(path, 'migrate')
    expect(init.volumes).toEqual([])
    await expect(loadContainerInput(path)).rejects.toThrow(/has 3 containers \(app, sidecar, migrate\); pick one with --container NAME/)
    await expect(loadContainerInput(path, 'nope')).rejects.toThrow(/has no container "nope"; it has: app, sidecar, migrate/)
  })

  it("reads crictl's container config (mounts become hostPath volumes) and checks its image", async () => {
    const config = await loadContainerInput(
      file('c.yaml', 'metadata: {name: c}\nimage: {image: busybox}\nmounts: [{container_path: /data, host_path: /srv}]\n'),
    )
    expect(config).toMatchObject({form: 'crictl', container: {name: 'c', image: 'busybox'}, volumes: [{hostPath: {path: '/srv'}}]})
    await expect(loadContainerInput(join(dir, 'c.yaml'), 'c')).rejects.toThrow(/--container picks a container of a Pod manifest/)
    const bad = loadContainerInput(file('bad.yaml', 'metadata: {name: c}\nimage: {image: "Bad:Image"}\n'))
    await expect(bad).rejects.toMatchObject({
      exitCode: ExitCode.INVALID_IMAGE_NAME,
      message: expect.stringMatching(/bad\.yaml: image\.image: /),
    })
  })
})
