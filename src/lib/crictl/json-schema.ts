/**
 * The JSON schema crictl prints for its pod and container config files (`run|create jsonschema`,
 * `runp|pull jsonschema`; util.go printJSONSchema). crictl reflects it from the CRI's Go structs with
 * github.com/invopop/jsonschema; this builds the same document from the generated CRI field table
 * (src/generated/runtime/v1/protojson-schema.ts) by the reflector's rules:
 * - a message is a definition under `$defs` (the Go type's name): its fields under `properties` in
 *   declaration order, named by their json tags (the .proto names), no other properties allowed;
 *   none is required, as every generated json tag says omitempty;
 * - a message field is a `$ref` to its definition, a repeated field an array of its element, a map
 *   an object of its values; integers are `integer`, floats `number`, bools `boolean`, strings
 *   `string`, bytes a base64 `string`;
 * - an enum is a string or an integer (jsonpb accepts both), written in place, not as a definition;
 * - the root refers to its definition; its `$id` is the Go package path and the type's name in
 *   dashed lower case (invopop's ToSnakeCase).
 * Keys come out in the order of invopop's Schema struct, and `$defs` sorted, as encoding/json writes
 * a Go map; the text is json.MarshalIndent's (two spaces) and a newline (fmt.Println).
 */
import {PROTOJSON_ENUMS, PROTOJSON_MESSAGES, type ProtojsonField} from '../../generated/runtime/v1/protojson-schema.js'

/** The configs crictl has a schema for. */
export type ConfigSchemaRoot = 'PodSandboxConfig' | 'ContainerConfig'

/** The draft invopop's Reflect declares. */
const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

/** The Go package crictl's CRI structs come from (k8s.io/cri-api); invopop builds `$id` from it. */
const GO_PACKAGE = 'k8s.io/cri-api/pkg/apis/runtime/v1'

/**
 * Fields whose bytes crictl does not advertise as base64: cri-api marshals KeyValue's value (an env
 * value) as a plain string, so crictl strips the reflected contentEncoding (stripKeyValueContentEncoding).
 */
const PLAIN_STRING_BYTES = new Set(['KeyValue.value'])

/** One schema node; keys are set in invopop's Schema struct order so the JSON text keeps it. */
type Schema = {[key: string]: unknown}

const ENUM: Schema = {oneOf: [{type: 'string'}, {type: 'integer'}]}

const SCALAR_TYPES: Readonly<Record<string, string>> = {
  string: 'string',
  bool: 'boolean',
  int32: 'integer',
  uint32: 'integer',
  int64: 'integer',
  uint64: 'integer',
  float: 'number',
  double: 'number',
}

/** invopop's ToSnakeCase: a dash before each capitalised word and each lower-to-upper step, lower case. */
export function dashedName(name: string): string {
  return name
    .replaceAll(/(.)([A-Z][a-z]+)/g, '$1-$2')
    .replaceAll(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
}

class Reflector {
  readonly definitions: Record<string, Schema> = {}

  /** A message's definition, added once (before its fields, as invopop does, so a cycle ends in a $ref). */
  reference(message: string): Schema {
    if (!this.definitions[message]) {
      const fields = PROTOJSON_MESSAGES[message]
      if (!fields) throw new Error(`no CRI message ${message} in the generated field table`)
      const properties: Schema = {}
      this.definitions[message] = {properties, additionalProperties: false, type: 'object'}
      for (const field of fields) properties[field[3]] = this.field(message, field)
    }

    return {$ref: `#/$defs/${message}`}
  }

  private field(message: string, [, type, shape, protoName]: ProtojsonField): Schema {
    const element = this.element(type, PLAIN_STRING_BYTES.has(`${message}.${protoName}`))
    if (shape === 'list') return {items: element, type: 'array'}
    if (shape === 'map') return {additionalProperties: element, type: 'object'}
    return element
  }

  private element(type: string, plainBytes: boolean): Schema {
    if (type === 'bytes') return plainBytes ? {type: 'string'} : {type: 'string', contentEncoding: 'base64'}
    const scalar = SCALAR_TYPES[type]
    if (scalar) return {type: scalar}
    if (type in PROTOJSON_ENUMS) return ENUM
    return this.reference(type)
  }
}

/** The schema document of `root`, as crictl prints it. */
export function configJsonSchema(root: ConfigSchemaRoot): string {
  const reflector = new Reflector()
  const ref = reflector.reference(root).$ref
  const sorted = Object.keys(reflector.definitions).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const $defs = Object.fromEntries(sorted.map((name) => [name, reflector.definitions[name]]))
  const document = {$schema: DRAFT, $id: `https://${GO_PACKAGE}/${dashedName(root)}`, $ref: ref, $defs}
  return `${JSON.stringify(document, null, 2)}\n`
}
