import {Args} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {fishScript} from '../lib/completion/fish.js'
import {bashScript, completionModel, type OclifCommandLike, type Shell, zshScript} from '../lib/completion/scripts.js'

export default class Completion extends BaseCommand<typeof Completion> {
  static override summary = 'Print a shell completion script for bash, zsh or fish.'

  static override description = `Completes commands, flags and fixed flag values (such as -o json|yaml) from podctl's \
own command list; the script is static, so <Tab> never starts podctl or calls the runtime.`

  static override examples = [
    {description: 'Enable completion in the current bash', command: 'source <(<%= config.bin %> <%= command.id %> bash)'},
    {
      description: 'Install for every bash session',
      command: '<%= config.bin %> <%= command.id %> bash > ~/.local/share/bash-completion/completions/<%= config.bin %>',
    },
    {
      description: 'Install for zsh (a directory in $fpath), then start a new shell',
      // eslint-disable-next-line no-template-curly-in-string -- ${fpath[1]} is shell syntax in the example command, not a template
      command: '<%= config.bin %> <%= command.id %> zsh > "${fpath[1]}/_<%= config.bin %>"',
    },
    {
      description: 'Install for fish',
      command: '<%= config.bin %> <%= command.id %> fish > ~/.config/fish/completions/<%= config.bin %>.fish',
    },
  ]

  static override enableJsonFlag = false

  static override args = {
    shell: Args.string({description: 'The shell to complete for.', options: ['bash', 'zsh', 'fish'], default: 'bash'}),
  }

  public async run(): Promise<{shell: Shell}> {
    const shell = this.args.shell as Shell
    const model = completionModel(this.config.commands as unknown as OclifCommandLike[])
    const scripts = {bash: bashScript, zsh: zshScript, fish: fishScript}
    const script = scripts[shell](this.config.bin, model)
    process.stdout.write(script)
    return {shell}
  }
}
