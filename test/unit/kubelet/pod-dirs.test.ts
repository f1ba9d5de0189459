import {existsSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {removeRecordedPodDirectory} from '../../../src/lib/kubelet/pod-dirs.js'

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
