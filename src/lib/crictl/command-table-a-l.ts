/* eslint-disable @stylistic/max-len -- crictl's usage texts are kept whole, as cmd/crictl writes them, so they can be compared at a glance */
/**
 * crictl v1.37's commands attach … logs (cmd/crictl/*.go), by name as main() sorts them, each with
 * its flags sorted by name as cli.FlagsByName sorts them. The rest are in command-table-m-z.ts.
 */
import type {CrictlCommand, CrictlFlag} from './command-spec.js'

const TEMPLATE_USAGE = 'The template string is only used when output is go-template; The Template format is golang template'
const FILTER_USAGE =
  'Filter output based on provided conditions.\nAvailable filters: \n* dangling=(boolean - true or false)\n* reference=/regular expression/\n' +
  '* before=<image-name>[:<tag>]|<image id>|<image@digest>\n* since=<image-name>[:<tag>]|<image id>|<image@digest>\nMultiple filters can be combined together.'

export const template: CrictlFlag = {name: 'template', kind: 'string', usage: TEMPLATE_USAGE}
export const imageFilter: CrictlFlag = {name: 'filter', aliases: ['f'], kind: 'string-slice', usage: FILTER_USAGE}
export const label: CrictlFlag = {name: 'label', kind: 'string-slice', usage: 'Filter by key=value label'}
const statusOutput: CrictlFlag = {
  name: 'output',
  aliases: ['o'],
  kind: 'string',
  usage: 'Output format, One of: json|yaml|go-template|table',
}
const quietStatus: CrictlFlag = {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Do not show verbose information'}

/** The streaming flags of attach, exec and port-forward (transport and TLS). */
export const STREAM_FLAGS: readonly CrictlFlag[] = [
  {name: 'tls-ca', kind: 'string', usage: 'Path to the streaming TLS CA certificate'},
  {name: 'tls-cert', kind: 'string', usage: 'Path to the streaming TLS certificate'},
  {name: 'tls-key', kind: 'string', usage: 'Path to the streaming TLS key'},
  {
    name: 'tls-sni',
    aliases: ['tls-server-name'],
    kind: 'string',
    value: 'localhost',
    usage: 'Server name used in the TLS client to check server certificates against',
  },
  {name: 'transport', aliases: ['r'], kind: 'string', value: 'spdy', usage: 'Transport protocol to use, one of: spdy|websocket'},
]

/** The pull flags of pull, create and run. */
export const auth: CrictlFlag = {
  name: 'auth',
  kind: 'string',
  env: ['CRICTL_AUTH'],
  usage: "Use `AUTH_STRING` for accessing the registry. AUTH_STRING is a base64 encoded 'USERNAME[:PASSWORD]'",
}
export const creds: CrictlFlag = {
  name: 'creds',
  kind: 'string',
  env: ['CRICTL_CREDS'],
  usage: 'Use `USERNAME[:PASSWORD]` for accessing the registry',
}
export const pullTimeout: CrictlFlag = {
  name: 'pull-timeout',
  aliases: ['pt'],
  kind: 'duration',
  env: ['CRICTL_PULL_TIMEOUT'],
  usage: 'Maximum time to be used for pulling the image, disabled if set to 0s',
}
export const username: CrictlFlag = {
  name: 'username',
  aliases: ['u'],
  kind: 'string',
  usage: 'Use `USERNAME` for accessing the registry. The password will be requested on the command line',
}
export const cancelTimeout: CrictlFlag = {
  name: 'cancel-timeout',
  aliases: ['T'],
  kind: 'duration',
  usage: 'Seconds to wait for the request to complete before cancelling',
}

/** create's and run's `jsonschema` subcommand (a subcommand's flags are not sorted: pod, then container). */
export const CONFIG_SCHEMA_COMMAND: CrictlCommand = {
  name: 'jsonschema',
  aliases: ['js'],
  usage: 'Display the JSON schema for the pod or container config',
  shortOptionHandling: true,
  flags: [
    {
      name: 'pod',
      aliases: ['p'],
      kind: 'bool',
      usage:
        'Print the pod JSON schema, which will be generated from the PodSandboxConfig of the CRI API compiled with this version of crictl',
    },
    {
      name: 'container',
      aliases: ['c'],
      kind: 'bool',
      usage:
        'Print the container JSON schema, which will be generated from the ContainerConfig of the CRI API compiled with this version of crictl',
    },
  ],
}

const tty: CrictlFlag = {name: 'tty', aliases: ['t'], kind: 'bool', usage: 'Allocate a pseudo-TTY'}

export const COMMANDS_A_TO_L: readonly CrictlCommand[] = [
  {
    name: 'attach',
    usage: 'Attach to a running container',
    argsUsage: 'CONTAINER-ID',
    shortOptionHandling: true,
    flags: [{name: 'stdin', aliases: ['i'], kind: 'bool', usage: 'Keep STDIN open'}, ...STREAM_FLAGS, tty],
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
    name: 'completion',
    usage: 'Output shell completion code',
    argsUsage: 'SHELL',
    description:
      'Output shell completion code for bash, zsh or fish.\n\nExamples:\n\n    # Installing bash completion on Linux\n    source <(crictl completion bash)\n\n' +
      '    # Installing zsh completion on Linux\n    source <(crictl completion zsh)\n\n    # Installing fish completion on Linux\n    crictl completion fish | source\n\t',
    flags: [],
  },
  {
    name: 'config',
    usage: 'Get, set and list crictl configuration options',
    argsUsage:
      '[<crictl options>]\n\nEXAMPLES:\n   # Set the key "debug" to "true"\n   crictl config --set debug=true\n\n   # Set the key "debug" to "true"\n   crictl config debug true\n\n' +
      '   # Get the value of "debug"\n   crictl config --get debug\n\n   # Show the full configuration\n   crictl config --list\n\nCRICTL OPTIONS:\n' +
      '\t runtime-endpoint:\tContainer Runtime Interface (CRI) runtime endpoint (default: "")\n' +
      '\t image-endpoint:\tContainer Runtime Interface (CRI) image endpoint (default: "")\n' +
      '\t timeout:\tTimeout of connecting to server (default: 2)\n\t debug:\tEnable debug output (default: false)\n' +
      '\t pull-image-on-create:\tEnable pulling image on create requests (default: false)\n' +
      '\t disable-pull-on-run:\tDisable pulling image on run requests (default: false)\n' +
      '\t max-retries:\tMax retries for connecting to an explicitly set endpoint (default: 3, 0 to disable, negative for infinite)',
    shortOptionHandling: true,
    flags: [
      {name: 'get', kind: 'string', usage: 'Show the option value'},
      {name: 'list', kind: 'bool', usage: 'Show all option value'},
      {name: 'set', kind: 'string-slice', usage: 'Set option (can specify multiple or separate values with commas: opt1=val1,opt2=val2)'},
    ],
  },
  {
    name: 'create',
    usage: 'Create a new container',
    argsUsage: 'POD container-config.[json|yaml] pod-config.[json|yaml]',
    subcommands: [CONFIG_SCHEMA_COMMAND],
    flags: [
      auth,
      cancelTimeout,
      creds,
      {name: 'no-pull', kind: 'bool', usage: 'Do not pull the image on container creation (overrides pull-image-on-create=true in config)'},
      pullTimeout,
      username,
      {name: 'with-pull', kind: 'bool', usage: 'Pull the image on container creation (overrides pull-image-on-create=false in config)'},
    ],
  },
  {
    name: 'events',
    aliases: ['event'],
    usage: 'Stream the events of containers',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', value: 'json', usage: 'Output format, One of: json|yaml|go-template'},
      template,
    ],
  },
  {
    name: 'exec',
    usage: 'Run a command in a running container',
    argsUsage: '[CONTAINER-ID] COMMAND [ARG...]',
    description:
      'The CONTAINER-ID is only required if none of the following filter flags are set:\n--image, --label, --last, --latest, --name, --pod, --state',
    shortOptionHandling: true,
    flags: [
      {name: 'ignore-errors', aliases: ['e'], kind: 'bool', usage: 'Ignore errors during command execution'},
      {name: 'image', kind: 'string', usage: 'Exec command for all containers matching this container image filter'},
      {name: 'interactive', aliases: ['i'], kind: 'bool', usage: 'Keep STDIN open'},
      {name: 'label', kind: 'string-slice', usage: 'Exec command for all containers matching this key=value label filter'},
      {name: 'last', aliases: ['n'], kind: 'int', usage: 'Exec command for all last n containers, set to 0 for unlimited'},
      {name: 'latest', aliases: ['l'], kind: 'bool', usage: 'Exec command for the most recently created container'},
      {name: 'name', kind: 'string', usage: 'Exec command for all containers matching this name filter regular expression pattern'},
      {name: 'parallel', aliases: ['x'], kind: 'bool', usage: 'Run the command in parallel if multiple containers are selected'},
      {name: 'pod', aliases: ['p'], kind: 'string', usage: 'Exec command for all containers matching this pod ID filter'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Do not print the container ID if multiple containers are selected'},
      {name: 'state', kind: 'string', usage: 'Exec command for all containers matching this container state filter'},
      {name: 'sync', aliases: ['s'], kind: 'bool', usage: 'Run the command synchronously'},
      {name: 'timeout', kind: 'int', usage: 'Timeout in seconds'},
      ...STREAM_FLAGS,
      tty,
    ],
  },
  {
    name: 'imagefsinfo',
    usage: 'Return image filesystem info',
    shortOptionHandling: true,
    flags: [statusOutput, template],
  },
  {
    name: 'images',
    aliases: ['image', 'img'],
    usage: 'List images',
    argsUsage: '[REPOSITORY[:TAG]]',
    shortOptionHandling: true,
    flags: [
      {name: 'digests', kind: 'bool', usage: 'Show digests'},
      imageFilter,
      {name: 'no-trunc', kind: 'bool', usage: 'Show output without truncating the ID'},
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|table'},
      {name: 'pinned', kind: 'bool', usage: 'Show whether the image is pinned or not'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Only show image IDs'},
      {name: 'verbose', aliases: ['v'], kind: 'bool', usage: 'Show verbose info for images'},
    ],
  },
  {
    name: 'info',
    usage: 'Display information of the container runtime',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', value: 'json', usage: 'Output format, One of: json|yaml|go-template'},
      quietStatus,
      template,
    ],
  },
  {
    name: 'inspect',
    usage: 'Display the status of one or more containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Show all containers'},
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
      {name: 'namespace', kind: 'string', usage: 'Filter by pod namespace regular expression pattern'},
      statusOutput,
      {name: 'pod', aliases: ['p'], kind: 'string', usage: 'Filter by pod id'},
      quietStatus,
      {name: 'state', aliases: ['s'], kind: 'string', usage: 'Filter by container state'},
      template,
    ],
  },
  {
    name: 'inspecti',
    usage: 'Return the status of one or more images',
    argsUsage: 'IMAGE-ID [IMAGE-ID...]',
    shortOptionHandling: true,
    flags: [imageFilter, {name: 'name', kind: 'string', usage: 'Filter by image name'}, statusOutput, quietStatus, template],
  },
  {
    name: 'inspectp',
    usage: 'Display the status of one or more pods',
    argsUsage: 'POD-ID [POD-ID...]',
    shortOptionHandling: true,
    flags: [
      label,
      {name: 'last', aliases: ['n'], kind: 'int', usage: 'Show last n recently created pods. Set 0 for unlimited'},
      {name: 'latest', aliases: ['l'], kind: 'bool', usage: 'Show the most recently created pod'},
      {name: 'name', kind: 'string', usage: 'Filter by pod name regular expression pattern'},
      {name: 'namespace', kind: 'string', usage: 'Filter by pod namespace regular expression pattern'},
      statusOutput,
      quietStatus,
      {name: 'state', aliases: ['s'], kind: 'string', usage: 'Filter by pod state'},
      template,
    ],
  },
  {
    name: 'logs',
    usage: 'Fetch the logs of a container',
    argsUsage: 'CONTAINER-ID',
    shortOptionHandling: true,
    flags: [
      {name: 'follow', aliases: ['f'], kind: 'bool', usage: 'Follow log output'},
      {name: 'limit-bytes', kind: 'int', value: -1, usage: 'Maximum bytes of logs to return. Defaults to no limit'},
      {
        name: 'previous',
        aliases: ['p'],
        kind: 'bool',
        usage: 'Print the logs for the previous instance of the container in a pod if it exists',
      },
      {name: 'reopen', aliases: ['r'], kind: 'bool', usage: 'Reopen the container logs for the provided container'},
      {name: 'since', kind: 'string', usage: 'Show logs since timestamp (e.g. 2013-01-02T13:23:37) or relative (e.g. 42m for 42 minutes)'},
      {name: 'stream', aliases: ['s'], kind: 'string', usage: 'Show specified stream (stdout or stderr). Defaults to both.'},
      {name: 'tail', kind: 'int', value: -1, usage: 'Number of lines to show from the end of the logs. Defaults to all'},
      {name: 'timestamps', aliases: ['t'], kind: 'bool', usage: 'Show timestamps'},
    ],
  },
]
