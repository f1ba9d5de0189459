/* eslint-disable @stylistic/max-len -- crictl's usage texts are kept whole, as cmd/crictl writes them, so they can be compared at a glance */
/** crictl v1.37's commands metricdescs … version, as command-table-a-l.ts has the first ones. */
import type {CrictlCommand, CrictlFlag} from './command-spec.js'
import {auth, cancelTimeout, CONFIG_SCHEMA_COMMAND, creds, label, pullTimeout, STREAM_FLAGS, username} from './command-table-a-l.js'

const POD_SCHEMA_USAGE_TEXT = 'The schema will be generated from the PodSandboxConfig of the CRI API compiled with this version of crictl'
const runtimeHandler: CrictlFlag = {
  name: 'runtime',
  aliases: ['r'],
  kind: 'string',
  usage: 'Runtime handler to use. Available options are defined by the container runtime.',
}
const jsonYaml: CrictlFlag = {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml'}
const jsonYamlTable: CrictlFlag = {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|table'}
const seconds: CrictlFlag = {name: 'seconds', aliases: ['s'], kind: 'int', value: 1, usage: 'Sample duration for CPU usage in seconds'}
const watchResources: CrictlFlag = {name: 'watch', aliases: ['w'], kind: 'bool', usage: 'Watch pod resources'}
const noTrunc: CrictlFlag = {name: 'no-trunc', kind: 'bool', usage: 'Show output without truncating the ID'}
const namespace: CrictlFlag = {name: 'namespace', kind: 'string', usage: 'Filter by pod namespace regular expression pattern'}

export const COMMANDS_M_TO_Z: readonly CrictlCommand[] = [
  {
    name: 'metricdescs',
    usage: 'List metric descriptors. Returns information about the metrics available through the CRI.',
    shortOptionHandling: true,
    flags: [jsonYaml],
  },
  {
    name: 'metricsp',
    usage:
      "List pod metrics. Metrics are unstructured key/value pairs gathered by CRI meant to replace cAdvisor's /metrics/cadvisor endpoint.",
    shortOptionHandling: true,
    flags: [jsonYaml, {name: 'watch', aliases: ['w'], kind: 'bool', usage: 'Watch pod metrics'}],
  },
  {
    name: 'pods',
    usage: 'List pods',
    shortOptionHandling: true,
    flags: [
      {name: 'id', kind: 'string', usage: 'filter by pod id'},
      label,
      {name: 'last', aliases: ['n'], kind: 'int', usage: 'Show last n recently created pods. Set 0 for unlimited'},
      {name: 'latest', aliases: ['l'], kind: 'bool', usage: 'Show the most recently created pod'},
      {name: 'name', kind: 'string', usage: 'Filter by pod name regular expression pattern'},
      namespace,
      noTrunc,
      {...jsonYamlTable, value: 'table'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'List only pod IDs'},
      {name: 'state', aliases: ['s'], kind: 'string', usage: 'Filter by pod state'},
      {name: 'verbose', aliases: ['v'], kind: 'bool', usage: 'Show verbose info for pods'},
    ],
  },
  {
    name: 'port-forward',
    usage: 'Forward local port to a pod',
    argsUsage: 'POD-ID [LOCAL_PORT:]REMOTE_PORT',
    flags: STREAM_FLAGS,
  },
  {
    name: 'ps',
    usage: 'List containers',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Show all containers'},
      {name: 'id', kind: 'string', usage: 'Filter by container id'},
      {name: 'image', kind: 'string', usage: 'Filter by container image'},
      label,
      {
        name: 'last',
        aliases: ['n'],
        kind: 'int',
        usage: 'Show last n recently created containers (includes all states). Set 0 for unlimited.',
      },
      {name: 'latest', aliases: ['l'], kind: 'bool', usage: 'Show the most recently created container (includes all states)'},
      {name: 'name', kind: 'string', usage: 'Filter by container name regular expression pattern'},
      namespace,
      noTrunc,
      {...jsonYamlTable, value: 'table'},
      {name: 'pod', aliases: ['p'], kind: 'string', usage: 'Filter by pod id'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Only display container IDs'},
      {name: 'resolve-image-path', aliases: ['r'], kind: 'bool', usage: 'Show image path instead of image id'},
      {name: 'state', aliases: ['s'], kind: 'string', usage: 'Filter by container state'},
      {name: 'verbose', aliases: ['v'], kind: 'bool', usage: 'Show verbose information for containers'},
    ],
  },
  {
    name: 'pull',
    usage: 'Pull an image from a registry',
    argsUsage: 'NAME[:TAG|@DIGEST]',
    shortOptionHandling: true,
    subcommands: [
      {
        name: 'jsonschema',
        aliases: ['js'],
        usage: 'Display the JSON schema for the pod-config.json, ',
        usageText: POD_SCHEMA_USAGE_TEXT,
        flags: [],
      },
    ],
    flags: [
      {name: 'annotation', aliases: ['a'], kind: 'string-slice', usage: 'Annotation to be set on the pulled image'},
      auth,
      creds,
      {name: 'pod-config', kind: 'string', takesFile: true, usage: 'Use `pod-config.[json|yaml]` to override the pull c'},
      pullTimeout,
      username,
    ],
  },
  {
    name: 'rm',
    usage: 'Remove one or more containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Remove all containers'},
      {name: 'force', aliases: ['f'], kind: 'bool', usage: 'Force removal of the container, disregarding if running'},
      {name: 'keep-logs', aliases: ['k'], kind: 'bool', usage: 'Preserve the container log file and its rotations'},
    ],
  },
  {
    name: 'rmi',
    usage: 'Remove one or more images',
    argsUsage: 'IMAGE-ID [IMAGE-ID...]',
    description:
      "Remove one or more images by ID or reference.\n\nNOTE: Due to CRI API limitations, when you specify an image by tag (e.g., 'localhost/test:latest'),\n" +
      'the entire image will be removed along with ALL of its tags, not just the specified tag.\n' +
      "This behavior differs from 'docker rmi', 'nerdctl rmi', and 'ctr image rm', which only remove\n" +
      "the specified tag. To remove only a specific tag, use the container runtime's native CLI tool\n(e.g., 'nerdctl', 'ctr', or 'podman').",
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Remove all images'},
      {name: 'prune', aliases: ['q'], kind: 'bool', usage: 'Remove all unused images'},
    ],
  },
  {
    name: 'rmp',
    usage: 'Remove one or more pods',
    argsUsage: 'POD-ID [POD-ID...]',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Remove all pods'},
      {name: 'force', aliases: ['f'], kind: 'bool', usage: 'Force removal of the pod sandbox, disregarding if running'},
    ],
  },
  {
    name: 'run',
    usage: 'Run a new container inside a sandbox',
    argsUsage: 'container-config.[json|yaml] pod-config.[json|yaml]',
    subcommands: [CONFIG_SCHEMA_COMMAND],
    flags: [
      auth,
      cancelTimeout,
      creds,
      {name: 'no-pull', kind: 'bool', usage: 'Do not pull the image (overrides disable-pull-on-run=false in config)'},
      pullTimeout,
      runtimeHandler,
      username,
      {name: 'with-pull', kind: 'bool', usage: 'Pull the image (overrides disable-pull-on-run=true in config)'},
    ],
  },
  {
    name: 'runp',
    usage: 'Run a new pod',
    argsUsage: 'pod-config.[json|yaml]',
    subcommands: [
      {
        name: 'jsonschema',
        aliases: ['js'],
        usage: 'Display the JSON schema for the pod-config.json',
        usageText: POD_SCHEMA_USAGE_TEXT,
        flags: [],
      },
    ],
    flags: [
      {
        name: 'cancel-timeout',
        aliases: ['T'],
        kind: 'duration',
        usage: 'Seconds to wait for a run pod sandbox request to complete before cancelling the request',
      },
      runtimeHandler,
    ],
  },
  {name: 'runtime-config', usage: 'Retrieve the container runtime configuration', shortOptionHandling: true, flags: []},
  {name: 'start', usage: 'Start one or more created containers', argsUsage: 'CONTAINER-ID [CONTAINER-ID...]', flags: []},
  {
    name: 'stats',
    usage: 'List container(s) resource usage statistics',
    argsUsage: '[ID]',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Show all containers (default shows just running)'},
      {name: 'id', kind: 'string', usage: 'Filter by container id'},
      label,
      jsonYamlTable,
      {name: 'pod', aliases: ['p'], kind: 'string', usage: 'Filter by pod id'},
      seconds,
      watchResources,
    ],
  },
  {
    name: 'statsp',
    usage: "List pod statistics. Stats represent a structured API that will fulfill the Kubelet's /stats/summary endpoint.",
    argsUsage: '[ID]',
    shortOptionHandling: true,
    flags: [{name: 'id', kind: 'string', usage: 'Filter by pod id'}, label, jsonYamlTable, seconds, watchResources],
  },
  {
    name: 'stop',
    usage: 'Stop one or more running containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Stop all running containers'},
      {name: 'timeout', aliases: ['t'], kind: 'int', usage: 'Seconds to wait to kill the container after a graceful stop is requested'},
    ],
  },
  {name: 'stopp', usage: 'Stop one or more running pods', argsUsage: 'POD-ID [POD-ID...]', flags: []},
  {
    name: 'update',
    usage: 'Update one or more running containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    flags: [
      {name: 'cpu-count', kind: 'int', usage: '(Windows only) Number of CPUs available to the container'},
      {name: 'cpu-maximum', kind: 'int', usage: '(Windows only) Portion of CPU cycles specified as a percentage * 100'},
      {name: 'cpu-period', kind: 'int', usage: 'CPU CFS period to be used for hardcapping (in usecs). 0 to use system default'},
      {name: 'cpu-quota', kind: 'int', usage: 'CPU CFS hardcap limit (in usecs). Allowed cpu time in a given period'},
      {name: 'cpu-share', kind: 'int', usage: 'CPU shares (relative weight vs. other containers)'},
      {name: 'cpuset-cpus', kind: 'string', usage: 'CPU(s) to use'},
      {name: 'cpuset-mems', kind: 'string', usage: 'Memory node(s) to use'},
      {name: 'memory', kind: 'int', usage: 'Memory limit (in bytes)'},
      {name: 'oom-score-adj', kind: 'int', usage: 'OOM Killer score to use'},
    ],
  },
  {
    name: 'update-runtime-config',
    usage: 'Update the runtime configuration',
    shortOptionHandling: true,
    flags: [
      {
        name: 'pod-cidr',
        aliases: ['p'],
        kind: 'string',
        usage:
          'The new Classless Inter-Domain Routing (CIDR) value to be used for pod IP addresses. If the CIDR is empty, runtimes should omit it.',
      },
    ],
  },
  {name: 'version', usage: 'Display runtime version information', flags: []},
]
