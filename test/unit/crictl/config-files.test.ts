/**
 * crictl's container config file keys are the Go structs' json tags, the .proto names, matched
 * without regard to case: `CDI_devices` (crictl v1.37 reads it, and names it in its type error) is
 * not the snake_case of its JSON name `CDIDevices`.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {loadContainerConfig, loadPodSandboxConfig} from '../../../src/lib/crictl/config-files.js'

const dir = mkdtempSync(join(tmpdir(), 'crictl-config-files-'))
const write = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

const CONTAINER = 'metadata:\n  name: c\nimage:\n  image: busybox\n'

describe('crictl container config: CDI_devices', () => {
  it.each(['CDI_devices', 'cdi_devices'])('%s: read into the request', async (key) => {
    const config = await loadContainerConfig(write(`${key}.yaml`, `${CONTAINER}${key}:\n- name: vendor.com/gpu=0\n`))
    expect(config.CDIDevices).toEqual([{name: 'vendor.com/gpu=0'}])
  })

  it("a wrong type: crictl's error, naming the field by its json tag", async () => {
    await expect(loadContainerConfig(write('wrong.yaml', `${CONTAINER}cdi_devices: x\n`))).rejects.toThrow(
      'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field ' +
        'ContainerConfig.CDI_devices of type []*v1.CDIDevice',
    )
  })
})

describe('crictl config: a YAML word or number where text is wanted', () => {
  // As the reference crictl v1.37 sent them on the lab: sigs.k8s.io/yaml writes a YAML 1.1 bool or a number
  // into a string field as its text ("false", "12", "1000"), not as a type error.
  it('is sent as its text, as crictl sends it', async () => {
    const pod = await loadPodSandboxConfig(
      write('words.yaml', 'metadata:\n  name: p\n  namespace: n\n  uid: 1.5\nlabels:\n  flag: on\n  count: 12\n  big: 1e3\n'),
    )
    expect(pod.metadata).toMatchObject({name: 'p', namespace: 'false', uid: '1.5'})
    expect(pod.labels).toEqual({flag: 'true', count: '12', big: '1000'})
    const container = await loadContainerConfig(write('env.yaml', `${CONTAINER}envs:\n- key: DEBUG\n  value: yes\n`))
    expect(container.envs.map((env) => [env.key, Buffer.from(env.value as never).toString()])).toEqual([['DEBUG', 'true']])
  })
})
