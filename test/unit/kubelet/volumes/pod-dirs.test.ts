import {existsSync, lstatSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {DEFAULT_POD_DIR_ROOT} from '../../../../src/lib/kube/helpers.js'
import {podDirRootFromEnv} from '../../../../src/lib/kubelet/core/pod-directory.js'
import {checkHostPath, managedHostsFile, removeRecordedPodDirectory} from '../../../../src/lib/kubelet/volumes/pod-dirs.js'

describe('removeRecordedPodDirectory', () => {
  const base = mkdtempSync(join(tmpdir(), 'podctl-poddirs-'))
  const root = join(base, 'pods')
  mkdirSync(root)
  const make = (parent: string, name: string) => {
    mkdirSync(join(parent, name, 'volumes'), {recursive: true})
    writeFileSync(join(parent, name, 'volumes', 'f'), 'x')
    return join(parent, name)
  }

  const sandbox = (path: string | undefined, uid: string) => ({
    annotations: (path === undefined ? {} : {'io.podctl.podDirectory': path}) as Record<string, string>,
    metadata: {uid},
  })

  it('removes the pod directory recorded on the sandbox, under the configured root', async () => {
    const dir = make(root, 'uid-1')
    await removeRecordedPodDirectory(sandbox(dir, 'uid-1'), root)
    expect(existsSync(dir)).toBe(false)
  })

  it('touches nothing that is not <root>/<this pod uid>', async () => {
    const other = make(root, 'uid-2')
    for (const path of [other, join(root, 'uid-3', '..', 'uid-2'), 'relative/uid-2', root]) {
      await removeRecordedPodDirectory(sandbox(path, 'uid-3'), root)
    }

    await removeRecordedPodDirectory(sandbox(undefined, 'uid-2'), root)
    expect(existsSync(other)).toBe(true)
  })

  it('leaves a directory outside the root alone even when its name is the pod uid (a hostile annotation)', async () => {
    const victim = make(join(base, 'precious'), 'uid-4')
    await removeRecordedPodDirectory(sandbox(victim, 'uid-4'), root)
    expect(existsSync(join(victim, 'volumes', 'f'))).toBe(true)
    // The same with the directory name as the uid directly below "/"-like places.
    const shallow = make(base, 'uid-5')
    await removeRecordedPodDirectory(sandbox(shallow, 'uid-5'), root)
    expect(existsSync(join(shallow, 'volumes', 'f'))).toBe(true)
  })

  it('does not follow a symlink at <root>/<uid> out of the root', async () => {
    const outside = make(join(base, 'elsewhere'), 'target')
    symlinkSync(outside, join(root, 'uid-6'))
    await removeRecordedPodDirectory(sandbox(join(root, 'uid-6'), 'uid-6'), root)
    expect(existsSync(join(outside, 'volumes', 'f'))).toBe(true)
    expect(lstatSync(join(root, 'uid-6')).isSymbolicLink()).toBe(true)
  })

  it("accepts the root named through a symlink (it is still podctl's directory)", async () => {
    const alias = join(base, 'alias')
    symlinkSync(root, alias)
    const dir = make(root, 'uid-7')
    await removeRecordedPodDirectory(sandbox(join(alias, 'uid-7'), 'uid-7'), alias)
    expect(existsSync(dir)).toBe(false)
  })

  it('takes the root from PODCTL_POD_DIR_ROOT, as run does', () => {
    expect(podDirRootFromEnv({PODCTL_POD_DIR_ROOT: '/x/pods'})).toBe('/x/pods')
    expect(podDirRootFromEnv({})).toBe(DEFAULT_POD_DIR_ROOT)
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
    await expect(checkHostPath(join(dir, 'file'), 'Directory')).rejects.toThrow(
      `hostPath type check failed: ${join(dir, 'file')} is not a directory`,
    )
    await expect(checkHostPath(join(dir, 'none'), 'File')).rejects.toThrow(`hostPath type check failed: ${join(dir, 'none')} is not a file`)
    await checkHostPath(join(dir, 'made/deep'), 'DirectoryOrCreate')
    await checkHostPath(join(dir, 'made/deep'), 'Directory')
    await checkHostPath(join(dir, 'new-file'), 'FileOrCreate')
    await checkHostPath(join(dir, 'new-file'), 'File')
    await checkHostPath(join(dir, 'anything'), '')
  })
})
