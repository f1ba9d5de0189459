import {describe, expect, it} from 'vitest'

import {PodctlAnnotation, REDACTED, secretEnvNamesOf} from '../../../src/lib/kube/labels.js'
import {generateContainerConfig} from '../../../src/lib/kubelet/kuberuntime/container-config.js'
import {statusDocument} from '../../../src/lib/node/inspect.js'
import {redactContainerConfig, redactInspectDocument, redactVerboseInfo} from '../../../src/lib/node/redact.js'
import {toPlain} from '../../../src/lib/util/plain.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'

const SECRET = 's3cr3t-value-42'
interface InfoShape {
  pid: number
  config: {command: string[]; args: string[]; envs: unknown[]}
  runtimeSpec: {process: {args: string[]; env: string[]}; root: unknown}
}

const names = new Set(['PASSWORD', 'DB_URL'])

/** containerd's verbose container info: the CRI config and the OCI spec. */
function containerdInfo(): Record<string, unknown> {
  return {
    pid: 42,
    config: {
      metadata: {name: 'app'},
      command: ['/bin/sh', '-c', `echo ${SECRET}`],
      args: [`--url=postgres://u:${SECRET}@db`],
      envs: [
        {key: 'PLAIN', value: 'visible'},
        {key: 'PASSWORD', value: SECRET},
        {key: 'DB_URL', value: `postgres://u:${SECRET}@db`},
      ],
      annotations: {[PodctlAnnotation.secretEnv]: '["PASSWORD","DB_URL"]'},
    },
    runtimeSpec: {
      process: {
        args: ['/bin/sh', '-c', `echo ${SECRET}`, `--url=postgres://u:${SECRET}@db`],
        env: ['PATH=/bin', 'PLAIN=visible', `PASSWORD=${SECRET}`, `DB_URL=postgres://u:${SECRET}@db`, 'PASSWORD_NOT=x'],
      },
      root: {path: 'rootfs'},
    },
  }
}

describe('redactVerboseInfo', () => {
  it('hides the named variables in the CRI config envs and the OCI process.env, and their values in argv', () => {
    const info = containerdInfo()
    const out = redactVerboseInfo(info, names) as InfoShape
    expect(out.config.envs).toEqual([
      {key: 'PLAIN', value: 'visible'},
      {key: 'PASSWORD', value: REDACTED},
      {key: 'DB_URL', value: REDACTED},
    ])
    expect(out.runtimeSpec.process.env).toEqual([
      'PATH=/bin',
      'PLAIN=visible',
      'PASSWORD=<redacted>',
      'DB_URL=<redacted>',
      'PASSWORD_NOT=x',
    ])
    expect(out.config.command).toEqual(['/bin/sh', '-c', 'echo <redacted>'])
    // The longest hidden value first: DB_URL's whole value, then PASSWORD's.
    expect(out.config.args).toEqual(['--url=<redacted>'])
    expect(out.runtimeSpec.process.args).toEqual(['/bin/sh', '-c', 'echo <redacted>', '--url=<redacted>'])
    expect(out.runtimeSpec.root).toEqual({path: 'rootfs'})
    expect(out.pid).toBe(42)
    expect(JSON.stringify(out)).not.toContain(SECRET)
    // A copy: the runtime's answer is untouched.
    expect(JSON.stringify(info)).toContain(SECRET)
  })

  it('leaves info alone without secret names, and survives shapes other runtimes use', () => {
    const info = containerdInfo()
    expect(redactVerboseInfo(info, new Set())).toBe(info)
    expect(redactVerboseInfo('not json', names)).toBe('not json')
    expect(redactVerboseInfo({config: {envs: 'odd'}, runtimeSpec: {process: {env: [1, 'PASSWORD']}}}, names)).toEqual({
      config: {envs: 'odd'},
      runtimeSpec: {process: {env: [1, 'PASSWORD'], args: undefined}},
    })
  })
})

describe('redactContainerConfig', () => {
  it('hides the named envs of a CRI ContainerConfig and their values in command and args', () => {
    const config = containerdInfo().config as Record<string, unknown>
    const out = redactContainerConfig(config, names)
    expect(out.envs).toContainEqual({key: 'PASSWORD', value: REDACTED})
    expect(JSON.stringify(out)).not.toContain(SECRET)
    expect(out.envs).toContainEqual({key: 'PLAIN', value: 'visible'})
  })
})

describe('redactInspectDocument', () => {
  it('reads the names from the container status annotations (io.podctl.secretEnv)', () => {
    const info = containerdInfo()
    delete (info.config as Record<string, unknown>).annotations
    const status = {id: 'c1', annotations: {[PodctlAnnotation.secretEnv]: '["PASSWORD","DB_URL"]'}, createdAt: '0'}
    const document = redactInspectDocument(statusDocument(status, {info: JSON.stringify(info)}))
    expect(JSON.stringify(document)).not.toContain(SECRET)
    expect(JSON.stringify(document)).toContain('PASSWORD=<redacted>')
  })

  it('changes nothing for a container without the annotation', () => {
    const info = containerdInfo()
    delete (info.config as Record<string, unknown>).annotations
    const document = statusDocument({id: 'c1', annotations: {}}, {info: JSON.stringify(info)})
    expect(redactInspectDocument(document)).toBe(document)
  })
})

describe('io.podctl.secretEnv', () => {
  it('records the names (never the values) of the variables taken from a Secret', () => {
    const pod = parsePod(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name: 'p', namespace: 'ns', uid: 'u'},
        spec: {containers: [{name: 'app', image: 'busybox'}]},
      },
      'pod.yaml',
    )
    const config = generateContainerConfig(pod, pod.containers[0], {
      type: 'app',
      attempt: 0,
      imageRef: 'sha256:x',
      volumePaths: new Map(),
      nodeMemoryBytes: 1 << 30,
      env: [
        {name: 'PLAIN', value: 'visible'},
        {name: 'PASSWORD', value: SECRET, secret: true},
      ],
    })
    expect(secretEnvNamesOf(config.annotations)).toEqual(['PASSWORD'])
    expect(JSON.stringify(config.annotations)).not.toContain(SECRET)
    expect(JSON.stringify(toPlain(redactContainerConfig(toPlain(config) as Record<string, unknown>, new Set(['PASSWORD']))))).not.toContain(
      SECRET,
    )
    expect(secretEnvNamesOf({[PodctlAnnotation.secretEnv]: 'not json'})).toEqual([])
  })
})
