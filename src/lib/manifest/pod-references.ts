/**
 * The pod fields that name other objects: imagePullSecrets (Secrets of the input, used for the
 * pulls), serviceAccountName (the downward API's spec.serviceAccountName, and the ServiceAccount
 * document of the input the pod uses) and automountServiceAccountToken (which wins over the account's).
 */
import type {FieldReader, JsonObject} from './fields.js'
import type {PodModel} from './model.js'
import {dns1123Subdomain} from './names.js'

const REFERENCE_RULE = {api: 'LocalObjectReference', supported: ['name']}

type References = Pick<PodModel, 'imagePullSecrets' | 'serviceAccountName' | 'automountServiceAccountToken'>

export function readPodReferences(r: FieldReader, spec: JsonObject): References {
  const out: References = {}
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
  const automount = r.boolean(spec.automountServiceAccountToken, 'spec.automountServiceAccountToken')
  if (automount !== undefined) out.automountServiceAccountToken = automount
  return out
}
