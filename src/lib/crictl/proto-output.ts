/**
 * A CRI message as crictl prints it with -o json|yaml: golang/protobuf's jsonpb (EmitDefaults, two
 * spaces) and, for YAML, that JSON through sigs.k8s.io/yaml. The decoded messages already carry
 * jsonpb's values (camelCase keys in field order, int64 as strings, enum names, null for an absent
 * message: toPlain), so only the layout differs: jsonpb writes an empty list over two lines, and
 * the YAML has its keys sorted, lists not indented under their key, and a blank line after it
 * (crictl prints the YAML, which ends in a newline, with Println).
 */
import {toPlain} from '../util/plain.js'

/** A key whose value is an empty list, alone on its line (a string value ends in a quote, never matches). */
const EMPTY_LIST = /^( *)("(?:[^"\\]|\\.)*": )\[\](,?)$/gm

export function crictlJson(message: unknown): string {
  return JSON.stringify(toPlain(message), null, 2).replaceAll(EMPTY_LIST, '$1$2[\n$1]$3')
}

export async function crictlYaml(message: unknown): Promise<string> {
  const {stringify} = await import('yaml')
  return `${stringify(toPlain(message), {lineWidth: 0, sortMapEntries: true, indentSeq: false})}`
}
