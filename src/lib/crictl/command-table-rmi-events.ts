/** crictl v1.29's commands rmi … events, in main.go's order; see command-table-attach-rm.ts. */
import type {CrictlCommand} from './command-spec.js'

export const COMMANDS_RMI_TO_EVENTS: readonly CrictlCommand[] = [
  {
    name: 'rmi',
    usage: 'Remove one or more images',
    argsUsage: 'IMAGE-ID [IMAGE-ID...]',
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
    name: 'pods',
    usage: 'List pods',
    shortOptionHandling: true,
    flags: [
      {name: 'id', kind: 'string', usage: 'filter by pod id'},
      {name: 'label', kind: 'string-slice', usage: 'filter by key=value label'},
      {name: 'last', aliases: ['n'], kind: 'int', usage: 'Show last n recently created pods. Set 0 for unlimited'},
      {name: 'latest', aliases: ['l'], kind: 'bool', usage: 'Show the most recently created pod'},
      {name: 'name', kind: 'string', usage: 'filter by pod name regular expression pattern'},
      {name: 'namespace', kind: 'string', usage: 'filter by pod namespace regular expression pattern'},
      {name: 'no-trunc', kind: 'bool', usage: 'Show output without truncating the ID'},
      {name: 'output', aliases: ['o'], kind: 'string', value: 'table', usage: 'Output format, One of: json|yaml|table'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'list only pod IDs'},
      {name: 'state', aliases: ['s'], kind: 'string', usage: 'filter by pod state'},
      {name: 'verbose', aliases: ['v'], kind: 'bool', usage: 'show verbose info for pods'},
    ],
  },
  {
    name: 'start',
    usage: 'Start one or more created containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    flags: [],
  },
  {
    name: 'info',
    usage: 'Display information of the container runtime',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', value: 'json', usage: 'Output format, One of: json|yaml|go-template'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Do not show verbose information'},
      {
        name: 'template',
        kind: 'string',
        usage: 'The template string is only used when output is go-template; The Template format is golang template',
      },
    ],
  },
  {
    name: 'stop',
    usage: 'Stop one or more running containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    shortOptionHandling: true,
    flags: [
      {name: 'timeout', aliases: ['t'], kind: 'int', usage: 'Seconds to wait to kill the container after a graceful stop is requested'},
    ],
  },
  {
    name: 'stopp',
    usage: 'Stop one or more running pods',
    argsUsage: 'POD-ID [POD-ID...]',
    flags: [],
  },
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
    ],
  },
  {
    name: 'config',
    usage: 'Get and set crictl client configuration options',
    argsUsage:
      '[<crictl options>]\n' +
      '\n' +
      'EXAMPLE:\n' +
      '   crictl config --set debug=true\n' +
      '\n' +
      'CRICTL OPTIONS:\n' +
      '\t runtime-endpoint:\tContainer runtime endpoint\n' +
      '\t image-endpoint:\tImage endpoint\n' +
      '\t timeout:\tTimeout of connecting to server (default: 2s)\n' +
      '\t debug:\tEnable debug output (default: false)\n' +
      '\t pull-image-on-create:\tEnable pulling image on create requests (default: false)\n' +
      '\t disable-pull-on-run:\tDisable pulling image on run requests (default: false)',
    shortOptionHandling: true,
    flags: [
      {name: 'get', kind: 'string', usage: 'show the option value'},
      {name: 'list', kind: 'bool', usage: 'show all option value'},
      {name: 'set', kind: 'string-slice', usage: 'set option (can specify multiple or separate values with commas: opt1=val1,opt2=val2)'},
    ],
  },
  {
    name: 'stats',
    usage: 'List container(s) resource usage statistics',
    argsUsage: '[ID]',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Show all containers (default shows just running)'},
      {name: 'id', kind: 'string', usage: 'Filter by container id'},
      {name: 'label', kind: 'string-slice', usage: 'Filter by key=value label'},
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|table'},
      {name: 'pod', aliases: ['p'], kind: 'string', usage: 'Filter by pod id'},
      {name: 'seconds', aliases: ['s'], kind: 'int', value: 1, usage: 'Sample duration for CPU usage in seconds'},
      {name: 'watch', aliases: ['w'], kind: 'bool', usage: 'Watch pod resources'},
    ],
  },
  {
    name: 'statsp',
    usage: "List pod statistics. Stats represent a structured API that will fulfill the Kubelet's /stats/summary endpoint.",
    argsUsage: '[ID]',
    shortOptionHandling: true,
    flags: [
      {name: 'id', kind: 'string', usage: 'Filter by pod id'},
      {name: 'label', kind: 'string-slice', usage: 'Filter by key=value label'},
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|table'},
      {name: 'seconds', aliases: ['s'], kind: 'int', value: 1, usage: 'Sample duration for CPU usage in seconds'},
      {name: 'watch', aliases: ['w'], kind: 'bool', usage: 'Watch pod resources'},
    ],
  },
  {
    name: 'metricsp',
    usage:
      'List pod metrics. Metrics are unstructured key/value pairs ' +
      "gathered by CRI meant to replace cAdvisor's /metrics/cadvisor endpoint.",
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml'},
      {name: 'watch', aliases: ['w'], kind: 'bool', usage: 'Watch pod metrics'},
    ],
  },
  {
    name: 'completion',
    usage: 'Output shell completion code',
    argsUsage: 'SHELL',
    description:
      'Output shell completion code for bash, zsh or fish.\n' +
      '\n' +
      'Examples:\n' +
      '\n' +
      '    # Installing bash completion on Linux\n' +
      '    source <(crictl completion bash)\n' +
      '\n' +
      '    # Installing zsh completion on Linux\n' +
      '    source <(crictl completion zsh)\n' +
      '\n' +
      '    # Installing fish completion on Linux\n' +
      '    crictl completion fish | source\n' +
      '\t',
    flags: [],
  },
  {
    name: 'checkpoint',
    usage: 'Checkpoint one or more running containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    shortOptionHandling: true,
    flags: [
      {
        name: 'export',
        aliases: ['e'],
        kind: 'string',
        usage: 'Specify the name of the tar archive (/path/to/checkpoint.tar) used to export the checkpoint image.',
      },
    ],
  },
  {
    name: 'runtime-config',
    usage: 'Retrieve the container runtime configuration',
    shortOptionHandling: true,
    flags: [],
  },
  {
    name: 'events',
    aliases: ['event'],
    usage: 'Stream the events of containers',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', value: 'json', usage: 'Output format, One of: json|yaml|go-template'},
      {
        name: 'template',
        kind: 'string',
        usage: 'The template string is only used when output is go-template; The Template format is golang template',
      },
    ],
  },
]
