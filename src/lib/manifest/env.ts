/**
 * A container's env and envFrom as the API server validates them (validateEnv, validateEnvFrom,
 * validateObjectFieldSelector, validateContainerResourceFieldSelector): plain values, valueFrom
 * (fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef, fileKeyRef) and envFrom with prefix. The values
 * themselves are found when the container starts (kubelet/env.ts), as the kubelet does.
 */
import {type FieldReader, type Json} from './fields.js'
import type {EnvFromModel, EnvVarModel, EnvVarSourceModel, FileKeyRefModel, ResourceFieldRefModel} from './model.js'
import {dns1123Subdomain, envVarName} from './names.js'
import {parseQuantity} from './quantity.js'

const ENV_RULE = {api: 'EnvVar', supported: ['name', 'value', 'valueFrom']}
const ENV_SOURCE_RULE = {api: 'EnvVarSource', supported: ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef']}
const FILE_KEY_REF_RULE = {api: 'FileKeySelector', supported: ['volumeName', 'path', 'key', 'optional']}
const FIELD_REF_RULE = {api: 'ObjectFieldSelector', supported: ['apiVersion', 'fieldPath']}
const RESOURCE_FIELD_REF_RULE = {api: 'ResourceFieldSelector', supported: ['containerName', 'resource', 'divisor']}
const KEY_REF_RULE = {api: 'ConfigMapKeySelector', supported: ['name', 'key', 'optional']}
const ENV_FROM_RULE = {api: 'EnvFromSource', supported: ['prefix', 'configMapRef', 'secretRef']}
const REF_RULE = {api: 'ConfigMapEnvSource', supported: ['name', 'optional']}

/** fieldRef paths the API server allows in env (validEnvDownwardAPIFieldPathExpressions) ... */
export const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
] as const
/**
 * ... and in downwardAPI volumes (validVolumeDownwardAPIFieldPathExpressions); both also take
 * metadata.labels['k'] and metadata.annotations['k'].
 */
export const VOLUME_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.labels',
  'metadata.annotations',
  'metadata.uid',
] as const

/** validContainerResourceFieldPathExpressions (hugepages-<size> are allowed too). */
const RESOURCES = [
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
]
const CPU_DIVISORS = ['1m', '1']
const MEMORY_DIVISORS = ['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei']

const SUBSCRIPTED = /^metadata\.(labels|annotations)\['(.+)'\]$/

/** A ConfigMap or Secret key (IsConfigMapKey): [-._a-zA-Z0-9]+, at most 253 characters, not "." or "..". */
export function configKey(value: string): string | undefined {
  if (value.length > 253) return 'must be no more than 253 characters'
  if (!/^[-._a-zA-Z0-9]+$/.test(value)) return "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
  if (value === '.' || value === '..') return `must not be '${value}'`
  return undefined
}

export function readFieldRef(r: FieldReader, value: Json | undefined, path: string, allowed: readonly string[]): {fieldPath: string} {
  const ref = r.object(value, path, FIELD_REF_RULE)
  const apiVersion = r.string(ref.apiVersion, `${path}.apiVersion`)
  if (apiVersion && apiVersion !== 'v1') r.fail(`${path}.apiVersion`, `"${apiVersion}" is not supported; use v1`)
  const fieldPath = r.requiredString(ref.fieldPath, `${path}.fieldPath`)
  if (allowed.includes(fieldPath)) return {fieldPath}
  if (SUBSCRIPTED.test(fieldPath)) return {fieldPath}
  const quoted = allowed.map((item) => `"${item}"`).join(', ')
  return r.fail(
    `${path}.fieldPath`,
    `"${fieldPath}" is not supported; supported values: ${quoted}, "metadata.labels['<KEY>']", "metadata.annotations['<KEY>']"`,
  )
}

export function readResourceFieldRef(
  r: FieldReader,
  value: Json | undefined,
  path: string,
  needsContainer: boolean,
): ResourceFieldRefModel {
  const ref = r.object(value, path, RESOURCE_FIELD_REF_RULE)
  const containerName = r.string(ref.containerName, `${path}.containerName`) || undefined
  if (needsContainer && containerName === undefined) r.fail(`${path}.containerName`, 'is required in a downwardAPI volume')
  const resource = r.requiredString(ref.resource, `${path}.resource`)
  const hugepages = /^(limits|requests)\.hugepages-/.test(resource)
  if (!RESOURCES.includes(resource) && !hugepages) {
    r.fail(`${path}.resource`, `"${resource}" is not supported; supported values: ${RESOURCES.map((item) => `"${item}"`).join(', ')}`)
  }

  let divisor: string | undefined
  if (ref.divisor !== undefined && ref.divisor !== null) {
    if (typeof ref.divisor !== 'string' && typeof ref.divisor !== 'number')
      r.fail(`${path}.divisor`, 'must be a quantity such as 1m or 1Mi')
    divisor = String(ref.divisor)
    const quantity = parseQuantity(divisor)
    const allowed = resource.endsWith('.cpu') ? CPU_DIVISORS : hugepages ? undefined : MEMORY_DIVISORS
    if (!quantity || (allowed && !allowed.some((item) => sameQuantity(item, divisor!)))) {
      r.fail(`${path}.divisor`, `"${divisor}" is not supported for ${resource}; use one of ${(allowed ?? ['1']).join(', ')}`)
    }
  }

  return {containerName, resource, divisor}
}

function sameQuantity(a: string, b: string): boolean {
  const x = parseQuantity(a)
  const y = parseQuantity(b)
  return Boolean(x && y && x.numerator * y.denominator === y.numerator * x.denominator)
}

function readKeyRef(r: FieldReader, value: Json | undefined, path: string): {name: string; key: string; optional: boolean} {
  const ref = r.object(value, path, KEY_REF_RULE)
  const name = r.requiredString(ref.name, `${path}.name`)
  const problem = dns1123Subdomain(name)
  if (problem) r.fail(`${path}.name`, `"${name}" is invalid: ${problem}`)
  const key = r.requiredString(ref.key, `${path}.key`)
  const keyProblem = configKey(key)
  if (keyProblem) r.fail(`${path}.key`, `"${key}" is invalid: ${keyProblem}`)
  return {name, key, optional: r.boolean(ref.optional, `${path}.optional`) ?? false}
}

/**
 * fileKeyRef (KEP-3721, EnvFiles): the volume must be an emptyDir of the pod (an init container
 * typically writes the file), the path relative without '..', the key printable ASCII without '='.
 */
function readFileKeyRef(r: FieldReader, value: Json | undefined, path: string, emptyDirs: ReadonlySet<string>): FileKeyRefModel {
  const ref = r.object(value, path, FILE_KEY_REF_RULE)
  const volumeName = r.requiredString(ref.volumeName, `${path}.volumeName`)
  if (!emptyDirs.has(volumeName)) {
    r.fail(`${path}.volumeName`, `"${volumeName}" must name an emptyDir volume of the pod (spec.volumes)`)
  }

  const file = r.requiredString(ref.path, `${path}.path`)
  if (file.startsWith('/')) r.fail(`${path}.path`, `"${file}" must be a relative path (inside the volume)`)
  if (file.split('/').includes('..')) r.fail(`${path}.path`, `"${file}" must not contain '..'`)
  const key = r.requiredString(ref.key, `${path}.key`)
  if (!/^[!-~]+$/.test(key) || key.includes('=')) {
    r.fail(`${path}.key`, `"${key}" is invalid: must consist of printable ASCII characters other than '=' and spaces`)
  }

  return {volumeName, path: file, key, optional: r.boolean(ref.optional, `${path}.optional`) ?? false}
}

function readValueFrom(r: FieldReader, value: Json | undefined, path: string, emptyDirs: ReadonlySet<string>): EnvVarSourceModel {
  const source = r.object(value, path, ENV_SOURCE_RULE)
  const given = ENV_SOURCE_RULE.supported.filter((key) => source[key] !== undefined && source[key] !== null)
  if (given.length === 0) r.fail(path, 'must specify one of: fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef or fileKeyRef')
  if (given.length > 1) r.fail(path, `may not have more than one field specified at a time (${given.join(', ')})`)
  const [kind] = given
  if (kind === 'fieldRef') return {fieldRef: readFieldRef(r, source.fieldRef, `${path}.fieldRef`, ENV_FIELD_PATHS)}
  if (kind === 'resourceFieldRef')
    return {resourceFieldRef: readResourceFieldRef(r, source.resourceFieldRef, `${path}.resourceFieldRef`, false)}
  if (kind === 'configMapKeyRef') return {configMapKeyRef: readKeyRef(r, source.configMapKeyRef, `${path}.configMapKeyRef`)}
  if (kind === 'fileKeyRef') return {fileKeyRef: readFileKeyRef(r, source.fileKeyRef, `${path}.fileKeyRef`, emptyDirs)}
  return {secretKeyRef: readKeyRef(r, source.secretKeyRef, `${path}.secretKeyRef`)}
}

/** `emptyDirs`: the names of the pod's emptyDir volumes, which fileKeyRef may read. */
export function readEnv(r: FieldReader, value: Json | undefined, path: string, emptyDirs: ReadonlySet<string> = new Set()): EnvVarModel[] {
  return r.list(value, path).map((entry, index) => {
    const where = `${path}[${index}]`
    const variable = r.object(entry, where, ENV_RULE)
    const name = r.requiredString(variable.name, `${where}.name`)
    const problem = envVarName(name)
    if (problem) r.fail(`${where}.name`, `"${name}" is invalid: ${problem}`)
    const text = r.string(variable.value, `${where}.value`) ?? ''
    if (variable.valueFrom === undefined || variable.valueFrom === null) return {name, value: text}
    if (text !== '') r.fail(`${where}.valueFrom`, 'may not be specified when `value` is not empty')
    return {name, value: '', valueFrom: readValueFrom(r, variable.valueFrom, `${where}.valueFrom`, emptyDirs)}
  })
}

export function readEnvFrom(r: FieldReader, value: Json | undefined, path: string): EnvFromModel[] {
  return r.list(value, path).map((entry, index) => {
    const where = `${path}[${index}]`
    const source = r.object(entry, where, ENV_FROM_RULE)
    const prefix = r.string(source.prefix, `${where}.prefix`) ?? ''
    if (prefix !== '') {
      const problem = envVarName(prefix)
      if (problem) r.fail(`${where}.prefix`, `"${prefix}" is invalid: ${problem}`)
    }

    const hasConfigMap = source.configMapRef !== undefined && source.configMapRef !== null
    const hasSecret = source.secretRef !== undefined && source.secretRef !== null
    if (hasConfigMap === hasSecret) r.fail(where, 'must specify exactly one of: configMapRef or secretRef')
    const ref = (key: 'configMapRef' | 'secretRef') => {
      const object = r.object(source[key], `${where}.${key}`, REF_RULE)
      const name = r.requiredString(object.name, `${where}.${key}.name`)
      const problem = dns1123Subdomain(name)
      if (problem) r.fail(`${where}.${key}.name`, `"${name}" is invalid: ${problem}`)
      return {name, optional: r.boolean(object.optional, `${where}.${key}.optional`) ?? false}
    }

    return hasConfigMap ? {prefix, configMapRef: ref('configMapRef')} : {prefix, secretRef: ref('secretRef')}
  })
}
