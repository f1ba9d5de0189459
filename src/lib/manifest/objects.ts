/**
 * ConfigMap and Secret documents given beside the pods (the objects a tutorial creates with the
 * same `kubectl apply`), validated as the API server validates them, kept by namespace and name
 * for env, volumes and imagePullSecrets. Secret values are decoded here and never shown: errors
 * about a Secret name the key, never the value.
 */
import {DEFAULT_NAMESPACE} from '../kube/helpers.js'
import {configKey} from './env.js'
import {FieldReader, type Json, type JsonObject} from './fields.js'
import type {ConfigMapObject, InputObjects, SecretObject} from './model.js'
import {dns1123Label, dns1123Subdomain} from './names.js'

/** The API server's limit on the data of one ConfigMap or Secret. */
export const MAX_OBJECT_DATA_BYTES = 1024 * 1024

const OBJECT_METADATA_RULE = {
  supported: ['name', 'namespace', 'labels', 'annotations'],
  ignored: ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'selfLink', 'generation', 'ownerReferences', 'finalizers'],
  unsupported: {generateName: 'set metadata.name'},
}
const CONFIG_MAP_RULE = {supported: ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable']}
const SECRET_RULE = {supported: ['apiVersion', 'kind', 'metadata', 'data', 'stringData', 'type', 'immutable']}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** The ConfigMaps and Secrets of one run's input. An object without a namespace is found from any pod's namespace. */
export class ObjectStore implements InputObjects {
  private readonly configMaps = new Map<string, ConfigMapObject>()
  private readonly secrets = new Map<string, SecretObject>()

  get size(): number {
    return this.configMaps.size + this.secrets.size
  }

  add(object: {kind: 'ConfigMap'; value: ConfigMapObject} | {kind: 'Secret'; value: SecretObject}): void {
    const map: Map<string, ConfigMapObject | SecretObject> = object.kind === 'ConfigMap' ? this.configMaps : this.secrets
    const key = `${object.value.namespace}/${object.value.name}`
    const first = map.get(key)
    if (first) {
      throw new FieldReader(object.value.source).fail(
        'metadata.name',
        `${object.kind} "${object.value.name}" is already defined in ${first.source}`,
      )
    }

    map.set(key, object.value)
  }

  configMap(namespace: string, name: string): ConfigMapObject | undefined {
    return this.configMaps.get(`${namespace}/${name}`) ?? this.configMaps.get(`/${name}`)
  }

  secret(namespace: string, name: string): SecretObject | undefined {
    return this.secrets.get(`${namespace}/${name}`) ?? this.secrets.get(`/${name}`)
  }

  /** What JSON output may show: names and keys, never a value. */
  toJSON(): unknown {
    return {
      configMaps: [...this.configMaps.values()].map(({name, namespace, data, binaryData}) => ({
        name,
        namespace: namespace || DEFAULT_NAMESPACE,
        keys: [...Object.keys(data), ...Object.keys(binaryData)].sort(),
      })),
      secrets: [...this.secrets.values()].map(({name, namespace, type, data}) => ({
        name,
        namespace: namespace || DEFAULT_NAMESPACE,
        type,
        keys: Object.keys(data).sort(),
      })),
    }
  }
}

export function readMetadata(r: FieldReader, value: Json | undefined): {name: string; namespace: string} {
  const metadata = r.object(value, 'metadata', OBJECT_METADATA_RULE)
  const name = r.requiredString(metadata.name, 'metadata.name')
  const problem = dns1123Subdomain(name)
  if (problem) r.fail('metadata.name', `"${name}" is invalid: ${problem}`)
  const namespace = r.string(metadata.namespace, 'metadata.namespace') ?? ''
  const nsProblem = namespace === '' ? undefined : dns1123Label(namespace)
  if (nsProblem) r.fail('metadata.namespace', `"${namespace}" is invalid: ${nsProblem}`)
  r.stringMap(metadata.labels, 'metadata.labels')
  r.stringMap(metadata.annotations, 'metadata.annotations')
  return {name, namespace}
}

export function checkApiVersion(r: FieldReader, root: JsonObject, kind: string): void {
  const apiVersion = r.string(root.apiVersion, 'apiVersion', {required: true})
  if (apiVersion !== 'v1') r.fail('apiVersion', `must be "v1" for a ${kind}, not "${apiVersion}"`)
}

/** A map whose values are never echoed: a wrong value names only its key. */
function secretMap(
  r: FieldReader,
  value: Json | undefined,
  path: string,
  decode: (text: string, where: string) => Buffer,
): Record<string, Buffer> {
  if (value === undefined || value === null) return {}
  if (typeof value !== 'object' || Array.isArray(value)) r.fail(path, 'must be a map of strings')
  const out: Record<string, Buffer> = {}
  for (const [key, item] of Object.entries(value)) {
    const problem = configKey(key)
    if (problem) r.fail(`${path}`, `key "${key}" is invalid: ${problem}`)
    if (typeof item !== 'string') r.fail(`${path}.${key}`, 'must be a string (quote the value)')
    out[key] = decode(item, `${path}.${key}`)
  }

  return out
}

function base64(r: FieldReader): (text: string, where: string) => Buffer {
  return (text, where) => {
    const compact = text.replaceAll(/\s+/g, '')
    if (!BASE64.test(compact)) r.fail(where, 'is not valid base64 (put plain text under stringData instead)')
    return Buffer.from(compact, 'base64')
  }
}

function checkSize(r: FieldReader, data: Record<string, Buffer | string>, path: string): void {
  const total = Object.values(data).reduce((sum, item) => sum + Buffer.byteLength(item), 0)
  if (total > MAX_OBJECT_DATA_BYTES) r.fail(path, `holds ${total} bytes; a ConfigMap or Secret holds at most 1 MiB`)
}

export function parseConfigMap(document: Json, source: string): ConfigMapObject {
  const r = new FieldReader(source)
  const root = r.object(document, '', CONFIG_MAP_RULE)
  checkApiVersion(r, root, 'ConfigMap')
  const {name, namespace} = readMetadata(r, root.metadata)
  const data = r.stringMap(root.data, 'data', (key, _value, path) => {
    const problem = configKey(key)
    if (problem) r.fail(path, `key is invalid: ${problem}`)
  })
  const binaryData = secretMap(r, root.binaryData, 'binaryData', base64(r))
  for (const key of Object.keys(binaryData)) {
    if (Object.hasOwn(data, key)) r.fail(`binaryData.${key}`, 'duplicates a key of data')
  }

  checkSize(r, {...data, ...binaryData}, 'data')
  return {name, namespace, data, binaryData, immutable: r.boolean(root.immutable, 'immutable') ?? false, source}
}

/** Keys a Secret of each built-in type must hold (ValidateSecret). */
const REQUIRED_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
}

export function parseSecret(document: Json, source: string): SecretObject {
  const r = new FieldReader(source)
  const root = r.object(document, '', SECRET_RULE)
  checkApiVersion(r, root, 'Secret')
  const {name, namespace} = readMetadata(r, root.metadata)
  const type = r.string(root.type, 'type') || 'Opaque'
  const data = secretMap(r, root.data, 'data', base64(r))
  // stringData is merged over data, as the API server does on write.
  Object.assign(
    data,
    secretMap(r, root.stringData, 'stringData', (text) => Buffer.from(text, 'utf8')),
  )
  checkSize(r, data, 'data')
  r.boolean(root.immutable, 'immutable')
  for (const key of REQUIRED_KEYS[type] ?? []) {
    if (!data[key]) r.fail('data', `must hold the key "${key}" for a Secret of type ${type}`)
  }

  if (type === 'kubernetes.io/basic-auth' && !data.username && !data.password) {
    r.fail('data', 'must hold the key "username" or "password" for a Secret of type kubernetes.io/basic-auth')
  }

  for (const key of ['.dockerconfigjson', '.dockercfg']) {
    if (REQUIRED_KEYS[type]?.[0] !== key) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(data[key].toString('utf8'))
    } catch {
      parsed = undefined
    }

    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      r.fail(`data[${key}]`, 'is not a JSON object of registry credentials')
  }

  return {name, namespace, type, data, source}
}
