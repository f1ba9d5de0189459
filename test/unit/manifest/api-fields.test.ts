import {describe, expect, it} from 'vitest'

import {isApiField, isApiType, unknownFieldMessage, unknownFieldsUnder} from '../../../src/lib/manifest/api-fields.js'
import type {ObjectRule} from '../../../src/lib/manifest/fields.js'
import {closestField} from '../../../src/lib/manifest/names.js'
import * as podFields from '../../../src/lib/manifest/pod-fields.js'
import {VOLUME_MOUNT_RULE, VOLUME_RULE} from '../../../src/lib/manifest/volumes.js'

const rules = (Object.entries({...podFields, VOLUME_RULE, VOLUME_MOUNT_RULE}) as Array<[string, unknown]>).filter(
  (entry): entry is [string, ObjectRule] => typeof entry[1] === 'object' && entry[1] !== null && 'supported' in entry[1],
)

describe("the Pod API table (Kubernetes' types.go, 1.17–1.36)", () => {
  it("names only fields the API has in podctl's rules, each rule with a type of the table", () => {
    const invented: string[] = []
    for (const [name, rule] of rules) {
      if (!rule.api) continue
      expect(isApiType(rule.api), `${name}.api ${rule.api}`).toBe(true)
      const named = [...rule.supported, ...(rule.ignored ?? []), ...Object.keys(rule.warned ?? {}), ...Object.keys(rule.unsupported ?? {})]
      invented.push(...named.filter((key) => !isApiField(rule.api!, key)).map((key) => `${name}: ${key}`))
    }

    expect(invented).toEqual([])
    // Only the resource lists (maps of resource names, not fields) have no API type.
    expect(rules.filter(([, rule]) => !rule.api).map(([name]) => name)).toEqual(['RESOURCE_LIST_RULE'])
  })

  it('has the fields of each release, gated ones included, and not the keys of Object.prototype', () => {
    expect(isApiField('PodSpec', 'schedulingGroup')).toBe(true) // 1.36, GenericWorkload
    expect(isApiField('PodSpec', 'workloadRef')).toBe(true) // 1.35 only
    expect(isApiField('ObjectMeta', 'clusterName')).toBe(true) // removed in 1.25
    expect(isApiField('Container', 'imagePolicy')).toBe(false)
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) expect(isApiField('ObjectMeta', key)).toBe(false)
    expect(isApiType('__proto__')).toBe(false)
  })

  it('checks what lies under a field podctl does not read, through lists and nested types', () => {
    const tolerations = [{key: 'a', efect: 'NoSchedule'}, {operator: 'Exists'}]
    expect(unknownFieldsUnder('PodSpec', 'tolerations', tolerations, 'spec.tolerations')).toEqual([
      {path: 'spec.tolerations[0].efect', message: 'is not a known field; did you mean effect?'},
    ])
    const affinity = {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchFields: [], x: 1}]}}}
    expect(unknownFieldsUnder('PodSpec', 'affinity', affinity, 'spec.affinity').map((found) => found.path)).toEqual([
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].x',
    ])
    // Maps keyed by name are not fields: any key goes.
    expect(unknownFieldsUnder('PodSpec', 'nodeSelector', {anything: 'x'}, 'spec.nodeSelector')).toEqual([])
    expect(unknownFieldMessage('PodSpec', 'zzz')).toBe('is not a field of PodSpec in Kubernetes 1.17–1.36')
  })

  it('suggests a field for a typo or a word left out or added, and only when one field fits', () => {
    const container = ['image', 'imagePullPolicy', 'volumeMounts', 'volumeDevices', 'readinessProbe', 'livenessProbe']
    expect(closestField('imagePolicy', container)).toBe('imagePullPolicy')
    expect(closestField('imagePullPolice', container)).toBe('imagePullPolicy')
    expect(closestField('volumeMountsList', container)).toBe('volumeMounts')
    // "probe" alone names two fields: no guess.
    expect(closestField('probeTimeout', container)).toBeUndefined()
    expect(closestField('volume', container)).toBeUndefined()
  })
})
