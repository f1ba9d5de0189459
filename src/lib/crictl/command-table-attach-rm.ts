/**
 * crictl v1.29's commands attach … rm, in main.go's order (app.Commands), with their flags sorted by
 * name as crictl sorts them. Facts from cmd/crictl/*.go; the rest is in command-table-rmi-events.ts.
 */
import type {CrictlCommand} from './command-spec.js'

export const COMMANDS_ATTACH_TO_RM: readonly CrictlCommand[] = [
  {
    name: 'attach',
    usage: 'Attach to a running container',
    argsUsage: 'CONTAINER-ID',
    shortOptionHandling: true,
    flags: [
      {name: 'stdin', aliases: ['i'], kind: 'bool', usage: 'Keep STDIN open'},
      {name: 'tty', aliases: ['t'], kind: 'bool', usage: 'Allocate a pseudo-TTY'},
    ],
  },
  {
    name: 'create',
    usage: 'Create a new container',
    argsUsage: 'POD container-config.[json|yaml] pod-config.[json|yaml]',
    flags: [
      {
        name: 'auth',
        kind: 'string',
        usage: "Use `AUTH_STRING` for accessing the registry. AUTH_STRING is a base64 encoded 'USERNAME[:PASSWORD]'",
      },
      {
        name: 'cancel-timeout',
        aliases: ['T'],
        kind: 'duration',
        usage: 'Seconds to wait for a container create request to complete before cancelling the request',
      },
      {name: 'creds', kind: 'string', usage: 'Use `USERNAME[:PASSWORD]` for accessing the registry'},
      {name: 'no-pull', kind: 'bool', usage: 'Do not pull the image on container creation (overrides pull-image-on-create=true in config)'},
      {
        name: 'username',
        kind: 'string',
        usage: 'Use `USERNAME` for accessing the registry. The password will be requested on the command line',
      },
      {name: 'with-pull', kind: 'bool', usage: 'Pull the image on container creation (overrides pull-image-on-create=false in config)'},
    ],
  },
  {
    name: 'exec',
    usage: 'Run a command in a running container',
    argsUsage: 'CONTAINER-ID COMMAND [ARG...]',
    shortOptionHandling: true,
    flags: [
      {name: 'interactive', aliases: ['i'], kind: 'bool', usage: 'Keep STDIN open'},
      {name: 'sync', aliases: ['s'], kind: 'bool', usage: 'Run the command synchronously'},
      {name: 'timeout', kind: 'int', usage: 'Timeout in seconds'},
      {name: 'tty', aliases: ['t'], kind: 'bool', usage: 'Allocate a pseudo-TTY'},
    ],
  },
  {
    name: 'version',
    usage: 'Display runtime version information',
    flags: [],
  },
  {
    name: 'images',
    aliases: ['image', 'img'],
    usage: 'List images',
    argsUsage: '[REPOSITORY[:TAG]]',
    shortOptionHandling: true,
    flags: [
      {name: 'digests', kind: 'bool', usage: 'Show digests'},
      {name: 'no-trunc', kind: 'bool', usage: 'Show output without truncating the ID'},
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|table'},
      {name: 'pinned', kind: 'bool', usage: 'Show whether the image is pinned or not'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Only show image IDs'},
      {name: 'verbose', aliases: ['v'], kind: 'bool', usage: 'Show verbose info for images'},
    ],
  },
  {
    name: 'inspect',
    usage: 'Display the status of one or more containers',
    argsUsage: 'CONTAINER-ID [CONTAINER-ID...]',
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|go-template|table'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Do not show verbose information'},
      {
        name: 'template',
        kind: 'string',
        usage: 'The template string is only used when output is go-template; The Template format is golang template',
      },
    ],
  },
  {
    name: 'inspecti',
    usage: 'Return the status of one or more images',
    argsUsage: 'IMAGE-ID [IMAGE-ID...]',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|go-template|table'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Do not show verbose information'},
      {
        name: 'template',
        kind: 'string',
        usage: 'The template string is only used when output is go-template; The Template format is golang template',
      },
    ],
  },
  {
    name: 'imagefsinfo',
    usage: 'Return image filesystem info',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|go-template|table'},
      {
        name: 'template',
        kind: 'string',
        usage: 'The template string is only used when output is go-template; The Template format is golang template',
      },
    ],
  },
  {
    name: 'inspectp',
    usage: 'Display the status of one or more pods',
    argsUsage: 'POD-ID [POD-ID...]',
    shortOptionHandling: true,
    flags: [
      {name: 'output', aliases: ['o'], kind: 'string', usage: 'Output format, One of: json|yaml|go-template|table'},
      {name: 'quiet', aliases: ['q'], kind: 'bool', usage: 'Do not show verbose information'},
      {
        name: 'template',
        kind: 'string',
        usage: 'The template string is only used when output is go-template; The Template format is golang template',
      },
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
      {name: 'since', kind: 'string', usage: 'Show logs since timestamp (e.g. 2013-01-02T13:23:37) or relative (e.g. 42m for 42 minutes)'},
      {name: 'tail', kind: 'int', value: -1, usage: 'Number of lines to show from the end of the logs. Defaults to all'},
      {name: 'timestamps', aliases: ['t'], kind: 'bool', usage: 'Show timestamps'},
    ],
  },
  {
    name: 'port-forward',
    usage: 'Forward local port to a pod',
    argsUsage: 'POD-ID [LOCAL_PORT:]REMOTE_PORT',
    flags: [],
  },
  {
    name: 'ps',
    usage: 'List containers',
    shortOptionHandling: true,
    flags: [
      {name: 'all', aliases: ['a'], kind: 'bool', usage: 'Show all containers'},
      {name: 'id', kind: 'string', usage: 'Filter by container id'},
      {name: 'image', kind: 'string', usage: 'Filter by container image'},
      {name: 'label', kind: 'string-slice', usage: 'Filter by key=value label'},
      {
        name: 'last',
        aliases: ['n'],
        kind: 'int',
        usage: 'Show last n recently created containers (includes all states). Set 0 for unlimited.',
      },
      {name: 'latest', aliases: ['l'], kind: 'bool', usage: 'Show the most recently created container (includes all states)'},
      {name: 'name', kind: 'string', usage: 'filter by container name regular expression pattern'},
      {name: 'no-trunc', kind: 'bool', usage: 'Show output without truncating the ID'},
      {name: 'output', aliases: ['o'], kind: 'string', value: 'table', usage: 'Output format, One of: json|yaml|table'},
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
    flags: [
      {name: 'annotation', aliases: ['a'], kind: 'string-slice', usage: 'Annotation to be set on the pulled image'},
      {
        name: 'auth',
        kind: 'string',
        env: ['CRICTL_AUTH'],
        usage: "Use `AUTH_STRING` for accessing the registry. AUTH_STRING is a base64 encoded 'USERNAME[:PASSWORD]'",
      },
      {name: 'creds', kind: 'string', env: ['CRICTL_CREDS'], usage: 'Use `USERNAME[:PASSWORD]` for accessing the registry'},
      {name: 'pod-config', kind: 'string', takesFile: true, usage: 'Use `pod-config.[json|yaml]` to override the pull c'},
      {
        name: 'username',
        aliases: ['u'],
        kind: 'string',
        usage: 'Use `USERNAME` for accessing the registry. The password will be requested on the command line',
      },
    ],
  },
  {
    name: 'run',
    usage: 'Run a new container inside a sandbox',
    argsUsage: 'container-config.[json|yaml] pod-config.[json|yaml]',
    flags: [
      {
        name: 'auth',
        kind: 'string',
        usage: "Use `AUTH_STRING` for accessing the registry. AUTH_STRING is a base64 encoded 'USERNAME[:PASSWORD]'",
      },
      {name: 'creds', kind: 'string', usage: 'Use `USERNAME[:PASSWORD]` for accessing the registry'},
      {name: 'no-pull', kind: 'bool', usage: 'Do not pull the image (overrides disable-pull-on-run=false in config)'},
      {
        name: 'runtime',
        aliases: ['r'],
        kind: 'string',
        usage: 'Runtime handler to use. Available options are defined by the container runtime.',
      },
      {
        name: 'timeout',
        aliases: ['t'],
        kind: 'duration',
        usage: 'Seconds to wait for a container create request before cancelling the request',
      },
      {name: 'username', kind: 'string', usage: 'Use `USERNAME` for accessing the registry. password will be requested'},
      {name: 'with-pull', kind: 'bool', usage: 'Pull the image (overrides disable-pull-on-run=true in config)'},
    ],
  },
  {
    name: 'runp',
    usage: 'Run a new pod',
    argsUsage: 'pod-config.[json|yaml]',
    flags: [
      {
        name: 'cancel-timeout',
        aliases: ['T'],
        kind: 'duration',
        usage: 'Seconds to wait for a run pod sandbox request to complete before cancelling the request',
      },
      {
        name: 'runtime',
        aliases: ['r'],
        kind: 'string',
        usage: 'Runtime handler to use. Available options are defined by the container runtime.',
      },
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
    ],
  },
]
