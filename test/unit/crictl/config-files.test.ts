/**
 * crictl's container config file keys are the Go structs' json tags, the .proto names, matched
 * without regard to case: `CDI_devices` (crictl v1.37 reads it, and names it in its type error) is
 * not the snake_case of its JSON name `CDIDevices`.
 */
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {loadContainerConfig} from '../../../src/lib/crictl/config-files.js'

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
