/**
 * The pod fields that name other objects: imagePullSecrets (Secrets of the input, used for the
 * pulls) and serviceAccountName (only read for the downward API's spec.serviceAccountName).
 */
import type {FieldReader, JsonObject} from './fields.js'
import type {PodModel} from './model.js'
import {dns1123Subdomain} from './names.js'

const REFERENCE_RULE = {supported: ['name']}

export function readPodReferences(r: FieldReader, spec: JsonObject): Pick<PodModel, 'imagePullSecrets' | 'serviceAccountName'> {
  const out: Pick<PodModel, 'imagePullSecrets' | 'serviceAccountName'> = {}
  const secrets = r.list(spec.imagePullSecrets, 'spec.imagePullSecrets').flatMap((entry, index) => {
    const where = `spec.imagePullSecrets[${index}]`
    // An entry without a name is dropped, as the API server drops it.
    const name = r.string(r.object(entry, where, REFERENCE_RULE).name, `${where}.name`) ?? ''
    if (name === '') return []
    const problem = dns1123Subdomain(name)
    if (problem) r.fail(`${where}.name`, `"${name}" is invalid: ${problem}`)
    return [name]
  })
  if (secrets.length > 0) out.imagePullSecrets = secrets
  const account =
    typeof spec.serviceAccountName === 'string'
      ? spec.serviceAccountName
      : typeof spec.serviceAccount === 'string'
        ? spec.serviceAccount
        : ''
  if (account !== '') out.serviceAccountName = account
  return out
}
