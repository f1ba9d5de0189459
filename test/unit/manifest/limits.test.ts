import {execFileSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode} from '../../../src/lib/errors.js'
import {parseCrictlConfigs} from '../../../src/lib/manifest/crictl.js'
import {escapeControl, ManifestError} from '../../../src/lib/manifest/fields.js'
import {loadCrictlConfigs, loadPodManifest, MAX_MANIFEST_BYTES, parseDocuments, readInput} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'
import {droppedFieldsWarning} from '../../../src/lib/manifest/warnings.js'

/**
 * Input that is valid YAML but hostile or absurd: numbers beyond what the CRI carries, alias
 * bombs, endless devices, FIFOs, unknown tags, escape sequences. Each is refused before anything
 * is created, as a usage error (exit 2) in one line naming the file and field.
 */
const UID = '11111111-2222-3333-4444-555555555555'
const dir = mkdtempSync(join(tmpdir(), 'podctl-limits-'))

const MINIMAL = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.36
`

async function parse(text: string, source = 'pod.yaml') {
  const documents = await parseDocuments(text, source)
  return documents.map((document) => parsePod(document, source, {newUid: () => UID}))
}

async function refusal(promise: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError)
    expect((error as ManifestError).exitCode).toBe(ExitCode.USAGE)
    expect((error as Error).message).not.toContain('\n')
    return (error as Error).message
  }

  throw new Error('the input was accepted')
}

const container = (extra: string) => `${MINIMAL}    ${extra}\n`

describe('integers are checked against the range of their wire type', () => {
  it('refuses a grace period beyond int64 instead of letting RunPodSandbox fail', async () => {
    expect(await refusal(parse(`${MINIMAL}  terminationGracePeriodSeconds: 99999999999999999999\n`))).toBe(
      'pod.yaml: spec.terminationGracePeriodSeconds must be at most 9223372036854775807, not 99999999999999999999',
    )
    expect(await refusal(parse(`${MINIMAL}  terminationGracePeriodSeconds: 1e30\n`))).toBe(
      'pod.yaml: spec.terminationGracePeriodSeconds must be at most 9223372036854775807, not 1e+30',
    )
    expect(await refusal(parse(`${MINIMAL}  terminationGracePeriodSeconds: 9223372036854775807\n`))).toBe(
      'pod.yaml: spec.terminationGracePeriodSeconds 9223372036854775807 is too large for podctl; use at most 9007199254740991',
    )
    expect(await refusal(parse(`${MINIMAL}  terminationGracePeriodSeconds: -99999999999999999999\n`))).toBe(
      'pod.yaml: spec.terminationGracePeriodSeconds must be at least 0, not -99999999999999999999',
    )
    const [pod] = await parse(`${MINIMAL}  terminationGracePeriodSeconds: 999999999999\n`)
    expect(pod.terminationGracePeriodSeconds).toBe(999_999_999_999)
  })

  it('keeps int32 ports in range even when the number does not fit a double exactly', async () => {
    expect(await refusal(parse(container('ports: [{containerPort: 18446744073709551697}]')))).toBe(
      'pod.yaml: spec.containers[0].ports[0].containerPort must be between 1 and 65535, not 18446744073709551697',
    )
    expect(await refusal(parse(container('ports: [{containerPort: 80, hostPort: 4294967376}]')))).toBe(
      'pod.yaml: spec.containers[0].ports[0].hostPort must be between 0 and 65535, not 4294967376',
    )
    expect(await refusal(parse(container('securityContext: {runAsUser: 99999999999999999999}')))).toBe(
      'pod.yaml: spec.containers[0].securityContext.runAsUser must be between 0 and 2147483647, not 99999999999999999999',
    )
  })

  it('refuses CPU and memory the runtime cannot set, per container and for the pod', async () => {
    expect(await refusal(parse(container('resources: {limits: {memory: 100Ei}}')))).toBe(
      'pod.yaml: spec.containers[0].resources.limits.memory "100Ei" is more than the runtime can set; ' +
        'use at most 9223372036854775807 bytes (8Ei)',
    )
    expect(await refusal(parse(container('resources: {requests: {cpu: "1e20"}}')))).toMatch(
      /^pod\.yaml: spec\.containers\[0\]\.resources\.requests\.cpu "1e20" is more than the runtime can set; use at most \d+m$/,
    )
    const twoBig = `${MINIMAL}    resources: {limits: {memory: 5Ei}}
  - name: b
    image: busybox
    resources: {limits: {memory: 5Ei}}
`
    expect(await refusal(parse(twoBig))).toBe(
      'pod.yaml: spec.containers ask for more memory than the runtime can set: at most 9223372036854775807 bytes (8Ei) for the whole pod',
    )
    const [pod] = await parse(container('resources: {limits: {memory: 7Ei, cpu: "1000000"}}'))
    expect(pod.containers[0].resources.limits).toEqual({memory: '7Ei', cpu: '1000000'})
  })

  it('checks crictl integers (numbers or decimal strings) as int64 and uint32', () => {
    const podConfig = {metadata: {name: 'p', namespace: 'n'}}
    const ctr = (linux: object, metadata?: object) => ({metadata: metadata ?? {name: 'c'}, image: {image: 'busybox'}, linux})
    const attempt =
      (containerConfig: object, pod: object = podConfig) =>
      () =>
        parseCrictlConfigs(
          {podConfig: pod as never, podSource: 'pod.json', containerConfig: containerConfig as never, containerSource: 'ctr.json'},
          {newUid: () => UID},
        )
    expect(attempt(ctr({resources: {memory_limit_in_bytes: '99999999999999999999'}}))).toThrow(
      'ctr.json: linux.resources.memory_limit_in_bytes must be at most 9223372036854775807, not 99999999999999999999',
    )
    expect(attempt(ctr({resources: {memory_limit_in_bytes: 1e20}}))).toThrow(
      'ctr.json: linux.resources.memory_limit_in_bytes must be at most 9223372036854775807, not 100000000000000000000',
    )
    expect(attempt(ctr({resources: {cpu_shares: 9_007_199_254_740_992}}))).toThrow(
      'ctr.json: linux.resources.cpu_shares 9007199254740992 is too large for podctl; use at most 9007199254740991',
    )
    expect(attempt(ctr({}, {name: 'c', attempt: 4_294_967_296}))).toThrow(
      'ctr.json: metadata.attempt must be between 0 and 4294967295, not 4294967296',
    )
    expect(attempt(ctr({}), {metadata: {name: 'p', namespace: 'n', attempt: -1}})).toThrow(
      'pod.json: metadata.attempt must be between 0 and 4294967295, not -1',
    )
    expect(attempt(ctr({}), {...podConfig, port_mappings: [{container_port: 80, protocol: 10n ** 20n}]})).toThrow(
      'pod.json: port_mappings[0].protocol must be one of TCP (0), UDP (1), SCTP (2), not 100000000000000000000',
    )
  })

  it('reads exact integers from YAML crictl configs too', async () => {
    writeFileSync(join(dir, 'p.yaml'), 'metadata: {name: p, namespace: n}\n')
    writeFileSync(
      join(dir, 'c.yaml'),
      'metadata: {name: c}\nimage: {image: busybox}\nlinux: {resources: {memory_limit_in_bytes: 9223372036854775808}}\n',
    )
    expect(await refusal(loadCrictlConfigs(join(dir, 'p.yaml'), join(dir, 'c.yaml')))).toBe(
      `${join(dir, 'c.yaml')}: linux.resources.memory_limit_in_bytes must be at most 9223372036854775807, not 9223372036854775808`,
    )
  })
})

describe('hostile YAML', () => {
  it('stops an alias bomb with a usage error', async () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]']
    for (let i = 1; i < 9; i++)
      lines.push(
        `${String.fromCodePoint(97 + i)}: &${String.fromCodePoint(97 + i)} [${new Array(10)
          .fill(`*${String.fromCodePoint(96 + i)}`)
          .join(',')}]`,
      )
    expect(await refusal(parseDocuments(lines.join('\n'), 'bomb.yaml'))).toMatch(
      /^bomb\.yaml: too many YAML alias expansions; write the repeated values out$/,
    )
  })

  it('refuses unknown tags instead of reading them as strings', async () => {
    expect(await refusal(parse(MINIMAL.replace('image: busybox:1.36', 'image: !js/function "function () {}"')))).toMatch(
      /^pod\.yaml: line 8, column 12: a YAML tag \(!name\) podctl does not read; remove the tag: podctl reads plain YAML or JSON$/,
    )
    expect(await refusal(parse(MINIMAL.replace('name: web', 'name: !!python/object:os.system web')))).toMatch(
      /^pod\.yaml: line \d+, column \d+: a YAML tag \(!name\) podctl does not read; remove the tag: podctl reads plain YAML or JSON$/,
    )
  })

  it('shows terminal escape sequences and newlines from the manifest escaped', async () => {
    const message = await refusal(parse(MINIMAL.replace('name: web', String.raw`name: "\e[31mred\e]0;owned\a\nline"`)))
    expect(message).toBe(
      String.raw`pod.yaml: metadata.name "\x1b[31mred\x1b]0;owned\x07\nline" is invalid: ` + message.split(' is invalid: ')[1],
    )
    // eslint-disable-next-line no-control-regex -- no raw control character may reach the terminal
    expect(message).not.toMatch(/[\u0000-\u001F\u007F-\u009F]/)
    expect(await refusal(parse(MINIMAL.replace('  name: web', '  name: web\n  "nam\\e": 1')))).toBe(
      String.raw`pod.yaml: metadata.nam\x1b is not a known field; did you mean name?`,
    )
    // A field of no Kubernetes release is refused, its path escaped.
    expect(await refusal(parse(MINIMAL.replace('  name: web', '  name: web\n  "\\e[2Jevil": 1')))).toBe(
      String.raw`pod.yaml: metadata.\x1b[2Jevil is not a field of ObjectMeta in Kubernetes 1.17–1.36`,
    )
    // A dropped field's path (a key of the API that podctl does not read) is escaped in the warning line too.
    const [pod] = await parse(MINIMAL)
    expect(droppedFieldsWarning([{...pod, droppedFields: ['metadata.\u001B[2Jx']}])).toContain(String.raw`metadata.\x1b[2Jx`)
    expect(escapeControl('a\u202Eb\u0085c\td')).toBe(String.raw`a\u202eb\x85c\td`)
  })

  it('refuses a __proto__ or constructor key by its path, as kubectl apply does, not as "[object Object]"', async () => {
    expect(await refusal(parse(MINIMAL.replace('  name: web', '  name: web\n  __proto__: {x: 1}')))).toBe(
      'pod.yaml: metadata.__proto__ is not a field of ObjectMeta in Kubernetes 1.17–1.36',
    )
    expect(await refusal(parse(MINIMAL.replace('  name: web', '  name: web\n  constructor: 1')))).toBe(
      'pod.yaml: metadata.constructor is not a field of ObjectMeta in Kubernetes 1.17–1.36',
    )
  })

  it('refuses annotations over the API server limit of 256 KiB', async () => {
    const big = 'x'.repeat(256 * 1024)
    expect(await refusal(parse(MINIMAL.replace('  name: web', `  name: web\n  annotations: {a: "${big}"}`)))).toBe(
      'pod.yaml: metadata.annotations are too long: 262145 bytes, must have at most 262144 bytes (keys and values together)',
    )
    const podConfig = {metadata: {name: 'p', namespace: 'n'}, annotations: {a: big}}
    expect(() =>
      parseCrictlConfigs({
        podConfig,
        podSource: 'pod.json',
        containerConfig: {metadata: {name: 'c'}, image: {image: 'b'}},
        containerSource: 'c.json',
      }),
    ).toThrow('pod.json: annotations are too long: 262145 bytes')
  })
})

describe('reading the input', () => {
  it('refuses a manifest larger than the API server would take, before parsing it', async () => {
    const path = join(dir, 'huge.yaml')
    writeFileSync(path, `${MINIMAL}# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`)
    expect(await refusal(loadPodManifest(path))).toBe(
      `${path}: the manifest is larger than 3 MiB; podctl reads Pods up to that size (as the API server does)`,
    )
  })

  it('stops reading an endless device', async () => {
    expect(await refusal(readInput('/dev/zero'))).toBe(
      '/dev/zero: the manifest is larger than 3 MiB; podctl reads Pods up to that size (as the API server does)',
    )
    expect(await refusal(loadPodManifest('/dev/null'))).toBe('/dev/null: no Pod found (the manifest is empty)')
  })

  it('does not block on a FIFO nobody writes to', async () => {
    const fifo = join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    expect(await refusal(loadPodManifest(fifo))).toBe(
      `${fifo}: nothing writes to this FIFO; start the writer first, or pipe the manifest to -f -`,
    )
  })

  it('reads a pipe that has a writer to its end', async () => {
    const [pod] = await new Promise<Awaited<ReturnType<typeof loadPodManifest>>>((resolve, reject) => {
      // bash's <(...) hands podctl a /dev/fd path of a pipe whose writer is already there.
      const script =
        'node --input-type=module -e "const {loadPodManifest} = await import(process.argv[1]); ' +
        'const pods = await loadPodManifest(process.argv[2]); console.log(JSON.stringify(pods.map((p) => p.name)))" ' +
        `"$0" <(sleep 0.2; printf '%s' "$1")`
      try {
        const out = execFileSync('bash', ['-c', script, loadModuleUrl(), MINIMAL], {encoding: 'utf8'})
        resolve(JSON.parse(out).map((name: string) => ({name})) as never)
      } catch (error) {
        reject(error)
      }
    })
    expect(pod.name).toBe('web')
  })

  it('names a directory and a missing file', async () => {
    expect(await refusal(readInput(dir))).toBe(`${dir}: cannot read the manifest (is a directory)`)
    expect(await refusal(readInput(join(dir, 'missing')))).toBe(`${join(dir, 'missing')}: cannot read the manifest (no such file)`)
  })
})

function loadModuleUrl(): string {
  return new URL('../../../dist/lib/manifest/load.js', import.meta.url).href
}
