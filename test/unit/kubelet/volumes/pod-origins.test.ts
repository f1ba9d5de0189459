import {describe, expect, it} from 'vitest'

import {podOrigins} from '../../../../src/lib/kubelet/volumes/pod-objects.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

describe('podOrigins', () => {
  it('says which replica of which workload each pod is, and what it starts after; a plain Pod says nothing', () => {
    const pods = [
      {name: 'db-0', namespace: 'ns', owner: {kind: 'StatefulSet', name: 'db', replica: 0, replicas: 2}},
      {
        name: 'db-1',
        namespace: 'ns',
        owner: {kind: 'StatefulSet', name: 'db', replica: 1, replicas: 2},
        startAfter: {pod: 'db-0', until: 'ready', reason: 'OrderedReady'},
      },
      {name: 'web-h-bcdfg', namespace: 'ns', owner: {kind: 'Deployment', name: 'web', via: 'ReplicaSet web-h'}},
      {name: 'solo', namespace: 'ns'},
    ] as PodModel[]
    expect(podOrigins(pods)).toEqual([
      'pod db-0_ns: from StatefulSet db, replica 1 of 2',
      'pod db-1_ns: from StatefulSet db, replica 2 of 2, started once db-0 is ready',
      'pod web-h-bcdfg_ns: from Deployment web (ReplicaSet web-h), one replica',
    ])
  })
})
