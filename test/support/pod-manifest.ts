/** One full Pod manifest (every field the translation reads) and what the kubelet-side tests run it with. */
import {parseDocuments} from '../../src/lib/manifest/load.js'
import type {PodModel} from '../../src/lib/manifest/model.js'
import {parsePod} from '../../src/lib/manifest/pod.js'

export const UID = '0b9c2f4e-7d1a-4c3b-9e8f-112233445566'
export const GiB = 1024 ** 3
export const HOST_RESOLV =
  '# generated\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch corp.example lab.example\noptions ndots:1 timeout:2\n'

export const FULL = `
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: ${UID}
  labels: {app: web, io.kubernetes.pod.name: spoofed}
  annotations: {team: checkout}
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 15
  hostname: web-0
  dnsConfig:
    nameservers: [1.1.1.1, 10.0.0.2]
    searches: [svc.example]
    options: [{name: ndots, value: "5"}, {name: edns0}]
  runtimeClassName: test-handler
  volumes:
  - {name: cache, emptyDir: {}}
  - {name: config, hostPath: {path: /etc/web, type: DirectoryOrCreate}}
  initContainers:
  - name: migrate
    image: localhost:5000/app:1
    command: [sh, -c, "echo migrate"]
    resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
  - name: app
    image: localhost:5000/app:1
    command: [/bin/server]
    args: [--port, $(PORT), --greeting, "$(GREETING)", "$$(PORT)", $(MISSING)]
    workingDir: /srv
    env:
    - {name: PORT, value: "8080"}
    - {name: GREETING, value: "hello on $(PORT)"}
    ports:
    - {name: http, containerPort: 8080, hostPort: 18080}
    - {containerPort: 9090, protocol: UDP}
    resources:
      limits: {cpu: 500m, memory: 128Mi}
    securityContext:
      runAsUser: 1000
      runAsGroup: 3000
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
    lifecycle:
      postStart: {exec: {command: [sh, -c, "echo started"]}}
      preStop: {exec: {command: [sh, -c, "sleep 1"]}}
    volumeMounts:
    - {name: cache, mountPath: /cache}
    - {name: config, mountPath: /etc/web, readOnly: true}
  - name: sidecar
    image: busybox
    securityContext: {privileged: true}
`

export async function pod(text = FULL): Promise<PodModel> {
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => UID})
}

export const POD_DIRS = '/var/lib/podctl/pods'
