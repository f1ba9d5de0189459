import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode, UsageError} from '../../../src/lib/errors.js'
import {checkImageReferences} from '../../../src/lib/manifest/images.js'
import {loadRunInput} from '../../../src/lib/manifest/load.js'
import type {ContainerModel, PodModel} from '../../../src/lib/manifest/model.js'

const container = (image: string) => ({name: 'c', image}) as ContainerModel
const pod = (images: string[], initImages: string[] = [], volumeImages: string[] = []) =>
  ({
    source: 'pod.yaml',
    containers: images.map(container),
    initContainers: initImages.map(container),
    volumes: volumeImages.map((reference, index) => ({name: `v${index}`, image: {reference}})),
  }) as PodModel

describe('checkImageReferences', () => {
  it('accepts what the kubelet can default-tag', () => {
    expect(() => checkImageReferences([pod(['busybox', 'localhost:5000/a/b:1', `r@sha256:${'a'.repeat(64)}`])], 'manifest')).not.toThrow()
  })

  it('names the field in the form the input was written in, with InvalidImageName (exit 11)', () => {
    const bad = pod(['busybox', 'UPPER/Case:1'])
    expect(() => checkImageReferences([bad], 'manifest')).toThrow(
      'pod.yaml: spec.containers[1].image: Failed to apply default image tag "UPPER/Case:1": couldn\'t parse image name "UPPER/Case:1"',
    )
    expect(() => checkImageReferences([bad], 'manifest')).toThrow(
      expect.objectContaining({code: 'InvalidImageName', exitCode: ExitCode.INVALID_IMAGE_NAME}),
    )
    // An image volume's reference is checked the same way.
    expect(() => checkImageReferences([pod(['busybox'], [], ['ok:1', 'Bad:1'])], 'manifest')).toThrow(
      /^pod\.yaml: spec\.volumes\[1\]\.image\.reference: Failed to apply default image tag "Bad:1"/,
    )
    const badInit = pod(['busybox'], ['bad image'])
    expect(() => checkImageReferences([badInit], 'manifest')).toThrow(/^pod\.yaml: spec\.initContainers\[0\]\.image: /)
    expect(() => checkImageReferences([bad], 'crictl')).toThrow(/^pod\.yaml: image\.image: Failed to apply default image tag/)
  })
})

describe('loadRunInput', () => {
  it('refuses ambiguous or incomplete input, naming the flags', async () => {
    await expect(loadRunInput({filename: 'a.yaml', file: 'b.yaml'})).rejects.toThrow('give the manifest once: either b.yaml or -f a.yaml')
    await expect(loadRunInput({filename: 'a.yaml', podConfig: 'p.json'})).rejects.toThrow(/either a Pod manifest \(-f\) or crictl configs/)
    await expect(loadRunInput({podConfig: 'p.json'})).rejects.toThrow('crictl configs come in pairs')
    await expect(loadRunInput({})).rejects.toThrow(UsageError)
  })

  it('says which form it read, so image errors name crictl fields for crictl configs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-run-input-'))
    const manifestText = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: busybox\n'
    writeFileSync(join(dir, 'pod.yaml'), manifestText)
    writeFileSync(join(dir, 'p.json'), JSON.stringify({metadata: {name: 'p', namespace: 'n'}}))
    writeFileSync(join(dir, 'c.json'), JSON.stringify({metadata: {name: 'c'}, image: {image: 'Bad:Image'}}))
    const manifest = await loadRunInput({file: join(dir, 'pod.yaml')})
    expect(manifest.form).toBe('manifest')
    expect(manifest.pods.map((p) => p.name)).toEqual(['web'])
    await expect(loadRunInput({podConfig: join(dir, 'p.json'), containerConfig: join(dir, 'c.json')})).rejects.toThrow(
      `${join(dir, 'p.json')}: image.image: Failed to apply default image tag "Bad:Image"`,
    )
  })
})
