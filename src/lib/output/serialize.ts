/** JSON/YAML for scripts, from toPlain's stable values. */
import {toPlain} from '../util/plain.js'

export function toJson(value: unknown): string {
  return JSON.stringify(toPlain(value), null, 2)
}

export async function toYaml(value: unknown): Promise<string> {
  const {stringify} = await import('yaml')
  return stringify(toPlain(value), {lineWidth: 0}).trimEnd()
}
