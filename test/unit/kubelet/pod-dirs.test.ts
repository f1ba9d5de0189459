import {existsSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {checkHostPath, managedHostsFile, removeRecordedPodDirectory} from '../../../src/lib/kubelet/pod-dirs.js'

describe('removeRecordedPodDirectory', () => {
  const root = mkdtempSync(join(tmpdir(), 'podctl-poddirs-'))
  const make = (name: string) => {
    mkdirSync(join(root, name, 'volumes'), {recursive: true})
    writeFileSync(join(root, name, 'volumes', 'f'), 'x')
    return join(root, name)
  }

  it('removes the pod directory recorded on the sandbox', async () => {
    const dir = make('uid-1')
    await removeRecordedPodDirectory({annotations: {'io.podctl.podDirectory': dir}, metadata: {uid: 'uid-1'}})
    expect(existsSync(dir)).toBe(false)
  })

  it('touches nothing that is not <root>/<this pod uid>', async () => {
    const other = make('uid-2')
    for (const path of [other, join(root, 'uid-3', '..', 'uid-2'), 'relative/uid-2', root]) {
      await removeRecordedPodDirectory({annotations: {'io.podctl.podDirectory': path}, metadata: {uid: 'uid-3'}})
    }

    await removeRecordedPodDirectory({annotations: {}, metadata: {uid: 'uid-2'}})
    expect(existsSync(other)).toBe(true)
  })
})

describe('host-side pod files', () => {
  it('writes the kubelet-managed hosts file', () => {
    expect(managedHostsFile(['10.1.2.3'], 'web-0')).toBe(
      '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n' +
        'fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.1.2.3\tweb-0\n',
    )
  })

  it('checks hostPath types like the hostPath plugin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-hostpath-'))
    writeFileSync(join(dir, 'file'), 'x')
    await expect(checkHostPath(join(dir, 'file'), 'Directory')).rejects.toThrow(`hostPath type check failed: ${join(dir, 'file')} is not a directory`)
    await expect(checkHostPath(join(dir, 'none'), 'File')).rejects.toThrow('does not exist')
    await checkHostPath(join(dir, 'made/deep'), 'DirectoryOrCreate')
    await checkHostPath(join(dir, 'made/deep'), 'Directory')
    await checkHostPath(join(dir, 'new-file'), 'FileOrCreate')
    await checkHostPath(join(dir, 'new-file'), 'File')
    await checkHostPath(join(dir, 'anything'), '')
  })
})
