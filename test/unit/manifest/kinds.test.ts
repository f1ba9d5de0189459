import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ManifestError} from '../../../src/lib/manifest/fields.js'
import {readDocuments} from '../../../src/lib/manifest/inputs.js'
import {skippedWarning} from '../../../src/lib/manifest/kinds.js'
import {loadRunInput, parseDocuments} from '../../../src/lib/manifest/load.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-kinds-'))
const DEPLOY = readFileSync(new URL('../../fixtures/kinds/deploy.yaml', import.meta.url), 'utf8').replaceAll('NAMESPACE', 'demo')

async function contents(text: string, source = 'in.yaml') {
  const documents = await parseDocuments(text, source)
  return readDocuments(
    documents.map((document, index) => ({document, label: documents.length > 1 ? `${source} (document ${index + 1})` : source})),
  )
}

function file(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError)
    return (error as Error).message
  }

  throw new Error('the input was accepted')
}

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: demo}
spec:
  containers:
  - name: app
    image: busybox:1.36
`

describe("a controller's deploy.yaml", () => {
  it('runs the Deployment and names every other object in one line', async () => {
    const loaded = await loadRunInput({filename: file('deploy.yaml', DEPLOY)})
    expect(loaded.pods.map((pod) => pod.owner?.kind)).toEqual(['Deployment'])
    expect(loaded.pods[0].namespace).toBe('demo')
    expect(loaded.notices).toEqual([
      'not run on one node (they need an API server or a controller): Namespace/demo, ServiceAccount/demo/demo-controller, ' +
        'ClusterRole/demo-controller, ClusterRoleBinding/demo-controller, Role/demo/demo-controller, RoleBinding/demo/demo-controller, ' +
        'Service/demo/demo-controller, PodDisruptionBudget/demo/demo-controller, IngressClass/demo, ' +
        'ValidatingWebhookConfiguration/demo-controller-admission, DemoPolicy/demo/default; --strict refuses them',
    ])
    // nodeSelector is still the one field without effect; the ConfigMap fed the env.
    expect(loaded.warning).toContain('spec.nodeSelector')
    expect(loaded.pods[0].objects?.configMap('demo', 'demo-controller')?.data['log-level']).toBe('info')
  })

  it('--strict refuses them all, each with its document', async () => {
    const message = await refusal(loadRunInput({filename: file('deploy.yaml', DEPLOY), strict: true}))
    const lines = message.split('\n')
    expect(lines[0]).toBe('--strict refuses 11 objects podctl does not run on one node (remove them, or run without --strict):')
    expect(lines).toContain(`  ${join(dir, 'deploy.yaml')} (document 9): Service/demo/demo-controller`)
    expect(lines).toHaveLength(12)
  })

  it('numbers documents as the file does, counting comment-only ones', async () => {
    const path = file(
      'numbered.yaml',
      `# header\n---\n# nothing\n---\n${POD}---\n${POD.replace('image: busybox:1.36', 'imagePullPolcy: x')}`,
    )
    expect(await refusal(loadRunInput({filename: path}))).toMatch(
      new RegExp(`^${path.replaceAll('.', String.raw`\.`)} \\(document 3, Pod/demo/web\\): `),
    )
  })

  it('shortens a long summary by kind with counts', () => {
    const objects = [
      ...['a', 'b', 'c'].map((name) => ({kind: 'ClusterRole', name, source: 'x'})),
      ...['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({kind: 'CustomResourceDefinition', name, source: 'x'})),
      {kind: 'Namespace', name: 'demo', source: 'x'},
    ]
    expect(skippedWarning(objects)).toBe(
      'not run on one node (they need an API server or a controller): ClusterRole x3, CustomResourceDefinition x6, Namespace/demo; ' +
        '--strict refuses them',
    )
  })
})

describe('document kinds', () => {
  it('opens kind: List, skips comment-only documents and hands PersistentVolumeClaims on as claims', async () => {
    const list = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Service, metadata: {name: web, namespace: demo}, spec: {ports: [{port: 80}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: demo}, spec: {containers: [{name: app, image: busybox}]}}
---
# nothing here
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`
    const read = await contents(list)
    expect(read.pods.map((pod) => pod.name)).toEqual(['web'])
    expect(read.skipped).toEqual([{kind: 'Service', name: 'web', namespace: 'demo', source: 'in.yaml (document 1) items[0]'}])
    expect(read.claims.map((claim) => claim.label)).toEqual(['in.yaml (document 2)'])
  })

  it('says what a file without a pod holds', async () => {
    const rbac = DEPLOY.split('---\n').slice(4, 8).join('---\n')
    expect(await refusal(contents(rbac, 'rbac.yaml'))).toBe(
      'rbac.yaml: no Pod found (ClusterRole/demo-controller, ClusterRoleBinding/demo-controller, Role/demo/demo-controller, ' +
        'RoleBinding/demo/demo-controller: not run on one node)',
    )
  })

  it('takes a kind close to a runnable one in a built-in group for a typo', async () => {
    const typo = `${POD}---\napiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: x}\n`
    expect(await refusal(contents(typo))).toBe(
      'in.yaml (document 2, Deploymnet/x): kind "Deploymnet" is not a known kind of apps/v1; did you mean Deployment?',
    )
    // The same name in another group is a custom resource.
    expect((await contents(typo.replace('apps/v1', 'example.com/v1'))).skipped[0].kind).toBe('Deploymnet')
  })

  it('reports the errors of every document at once, each naming its document, kind and name', async () => {
    const text = `${POD.replace('image: busybox:1.36', 'imagePullPolcy: Always')}---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {port: 8080}
`
    expect(await refusal(contents(text))).toBe(
      [
        '2 documents cannot be run as written:',
        '  in.yaml (document 1, Pod/demo/web): 2 fields cannot be run as written:',
        '      spec.containers[0].imagePullPolcy is not a known field; did you mean imagePullPolicy?',
        '      spec.containers[0].image is required',
        '  in.yaml (document 2, ConfigMap/cfg): data.port must be a string, not 8080; quote it: "8080"',
      ].join('\n'),
    )
  })
})

describe('ServiceAccount documents', () => {
  const account = (fields: string) => `apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: app, namespace: demo}\n${fields}`
  const pod = (fields: string) => `${POD}  serviceAccountName: app\n${fields}`

  it('automountServiceAccountToken: false is honoured: the account fields are no longer ignored', async () => {
    const read = await contents(`${account('automountServiceAccountToken: false\n')}---\n${pod('')}`)
    expect(read.pods[0].ignoredFields).toBeUndefined()
    // The pod's own field wins over the account's.
    const own = await contents(`${account('automountServiceAccountToken: false\n')}---\n${pod('  automountServiceAccountToken: true\n')}`)
    expect(own.pods[0].ignoredFields?.map((field) => field.path)).toEqual(['spec.serviceAccountName', 'spec.automountServiceAccountToken'])
    const mounted = await contents(`${account('')}---\n${pod('')}`)
    expect(mounted.pods[0].ignoredFields?.map((field) => field.path)).toEqual(['spec.serviceAccountName'])
  })

  it("gives a pod without imagePullSecrets the account's, as the ServiceAccount admission does", async () => {
    const read = await contents(`${account('imagePullSecrets: [{name: regcred}]\n')}---\n${pod('')}`)
    expect(read.pods[0].imagePullSecrets).toEqual(['regcred'])
  })

  it('checks the document like the API server', async () => {
    expect(await refusal(contents(`${account('automountServiceAccountTokn: false\n')}---\n${pod('')}`))).toBe(
      'in.yaml (document 1, ServiceAccount/demo/app): automountServiceAccountTokn is not a known field; ' +
        'did you mean automountServiceAccountToken?',
    )
    expect(await refusal(contents(`${account('automountServiceAccountToken: "no"\n')}---\n${pod('')}`))).toBe(
      'in.yaml (document 1, ServiceAccount/demo/app): automountServiceAccountToken must be true or false, not "no"',
    )
  })
})
