/**
 * The config schemas of `crictl run|create|runp|pull jsonschema`, built from the generated CRI field
 * table, against the bytes the reference crictl v1.37.0 prints (test/fixtures/crictl/jsonschema/,
 * recorded with `crictl run jsonschema --pod` and `crictl run jsonschema --container`).
 */
import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {configJsonSchema, dashedName} from '../../../src/lib/crictl/json-schema.js'

const recorded = (file: string) => readFileSync(new URL(`../../fixtures/crictl/jsonschema/${file}`, import.meta.url), 'utf8')

describe('crictl jsonschema', () => {
  it("PodSandboxConfig: crictl v1.37's bytes", () => {
    expect(configJsonSchema('PodSandboxConfig')).toBe(recorded('pod-sandbox-config.json'))
  })

  it("ContainerConfig: crictl v1.37's bytes, env values plain strings though KeyValue.value is bytes", () => {
    const schema = configJsonSchema('ContainerConfig')
    expect(schema).toBe(recorded('container-config.json'))
    const keyValue = (JSON.parse(schema) as {$defs: Record<string, unknown>}).$defs.KeyValue
    expect(keyValue).toEqual({properties: {key: {type: 'string'}, value: {type: 'string'}}, additionalProperties: false, type: 'object'})
  })

  it("names the schema as invopop's ToSnakeCase does", () => {
    expect(['PodSandboxConfig', 'ContainerConfig', 'CDIDevice', 'DNSConfig', 'Int64Value'].map((name) => dashedName(name))).toEqual([
      'pod-sandbox-config',
      'container-config',
      'cdi-device',
      'dns-config',
      'int64-value',
    ])
  })
})
