import {describe, expect, it} from 'vitest'

import {ManifestError} from '../../../src/lib/manifest/fields.js'
import {parseDocuments} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'

async function parse(containerFields: string, podFields = '') {
  const text = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
${podFields}  containers:
  - name: app
    image: busybox
    ports: [{name: http, containerPort: 8080}]
${containerFields
  .split('\n')
  .map((line) => `    ${line}`)
  .join('\n')}
`
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => 'uid'})
}

async function refusal(containerFields: string, podFields = ''): Promise<string> {
  try {
    await parse(containerFields, podFields)
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError)
    return (error as Error).message
  }

  throw new Error('accepted')
}

describe('probes', () => {
  it('accepts the three probes with the API server defaults', async () => {
    const pod = await parse(`livenessProbe: {httpGet: {port: http}}
readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 2, successThreshold: 2}
startupProbe: {grpc: {port: 9090}, failureThreshold: 30, terminationGracePeriodSeconds: 5}`)
    const [app] = pod.containers
    expect(app.livenessProbe).toEqual({
      handler: {httpGet: {path: '/', port: 'http', host: undefined, scheme: 'HTTP', httpHeaders: []}},
      initialDelaySeconds: 0,
      periodSeconds: 10,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    })
    expect(app.readinessProbe).toMatchObject({handler: {tcpSocket: {port: 8080}}, periodSeconds: 2, successThreshold: 2})
    expect(app.startupProbe).toMatchObject({
      handler: {grpc: {port: 9090, service: ''}},
      failureThreshold: 30,
      terminationGracePeriodSeconds: 5,
    })
  })

  it('reads httpGet headers, scheme and host; 0 means the default', async () => {
    const pod = await parse(`readinessProbe:
  httpGet: {path: /healthz?full=1, port: 8443, host: 127.0.0.1, scheme: HTTPS, httpHeaders: [{name: X-Probe, value: "1"}]}
  timeoutSeconds: 0`)
    expect(pod.containers[0].readinessProbe).toMatchObject({
      handler: {
        httpGet: {path: '/healthz?full=1', port: 8443, host: '127.0.0.1', scheme: 'HTTPS', httpHeaders: [{name: 'X-Probe', value: '1'}]},
      },
      timeoutSeconds: 1,
    })
  })

  it('refuses what the API server refuses, naming the field', async () => {
    expect(await refusal('livenessProbe: {periodSeconds: 3}')).toBe(
      'pod.yaml: spec.containers[0].livenessProbe must specify a handler type: exec, httpGet, tcpSocket or grpc',
    )
    expect(await refusal('livenessProbe: {exec: {command: ["true"]}, tcpSocket: {port: 1}}')).toBe(
      'pod.yaml: spec.containers[0].livenessProbe.tcpSocket may not specify more than 1 handler type (exec, tcpSocket given)',
    )
    expect(await refusal('livenessProbe: {exec: {command: ["true"]}, successThreshold: 2}')).toBe(
      'pod.yaml: spec.containers[0].livenessProbe.successThreshold must be 1 for a livenessProbe, not 2',
    )
    expect(await refusal('startupProbe: {exec: {command: ["true"]}, successThreshold: 3}')).toBe(
      'pod.yaml: spec.containers[0].startupProbe.successThreshold must be 1 for a startupProbe, not 3',
    )
    expect(await refusal('readinessProbe: {httpGet: {port: metrics}}')).toBe(
      'pod.yaml: spec.containers[0].readinessProbe.httpGet.port "metrics" is not the name of a port of this container; ' +
        'name it under ports or give the number',
    )
    expect(await refusal('readinessProbe: {exec: {command: ["true"]}, terminationGracePeriodSeconds: 3}')).toBe(
      'pod.yaml: spec.containers[0].readinessProbe.terminationGracePeriodSeconds must not be set for a readinessProbe',
    )
    expect(await refusal('readinessProbe: {exec: {command: ["true"]}, periodSeconds: -1}')).toMatch(/periodSeconds must be between 0 and/)
    expect(await refusal('readinessProbe: {tcpSocket: {port: 70000}}')).toMatch(/tcpSocket\.port must be between 1 and 65535/)
    expect(await refusal('readinessProbe: {httpGet: {port: 80, scheme: FTP}}')).toBe(
      'pod.yaml: spec.containers[0].readinessProbe.httpGet.scheme must be one of HTTP, HTTPS, not "FTP"',
    )
    expect(await refusal('readinessProbe: {exec: {command: ["true"]}, periodSecond: 1}')).toMatch(
      /periodSecond is not a known field; did you mean periodSeconds\?/,
    )
  })
})

describe('lifecycle handlers', () => {
  it('accepts exec, httpGet, sleep and (as the API server does) tcpSocket', async () => {
    const pod = await parse(`lifecycle:
  postStart: {httpGet: {path: /warm, port: http}}
  preStop: {sleep: {seconds: 5}}`)
    expect(pod.containers[0].lifecycle).toEqual({
      postStart: {httpGet: {path: '/warm', port: 'http', host: undefined, scheme: 'HTTP', httpHeaders: []}},
      preStop: {sleep: {seconds: 5}},
    })
    const tcp = await parse('lifecycle: {preStop: {tcpSocket: {port: 8080}}}')
    expect(tcp.containers[0].lifecycle.preStop).toEqual({tcpSocket: {port: 8080, host: undefined}})
  })

  it('bounds a sleep by the grace period', async () => {
    expect(await refusal('lifecycle: {preStop: {sleep: {seconds: 31}}}')).toBe(
      'pod.yaml: spec.containers[0].lifecycle.preStop.sleep.seconds ' +
        'must be non-negative and less than terminationGracePeriodSeconds (30), not 31',
    )
    expect(await refusal('lifecycle: {preStop: {sleep: {seconds: 6}}}', '  terminationGracePeriodSeconds: 5\n')).toMatch(/\(5\), not 6$/)
    expect(await refusal('lifecycle: {preStop: {}}')).toBe(
      'pod.yaml: spec.containers[0].lifecycle.preStop must specify a handler type: exec, httpGet or sleep',
    )
  })
})
