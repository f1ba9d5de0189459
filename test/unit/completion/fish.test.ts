import {describe, expect, it} from 'vitest'

import {fishScript} from '../../../src/lib/completion/fish.js'

describe('fish completion', () => {
  it('completes commands, flags, their fixed values and quotes summaries', () => {
    const script = fishScript('podctl', [
      {
        id: 'ps',
        summary: "List containers (crictl's ps)",
        flags: [
          {name: 'output', char: 'o', summary: 'Output format.', takesValue: true, options: ['table', 'json']},
          {name: 'color', summary: 'Colour.', takesValue: false, allowNo: true},
          {name: 'pod', char: 'p', summary: 'Pod.', takesValue: true},
        ],
        args: [],
      },
      {id: 'completion', summary: 'Completion.', flags: [], args: [{name: 'shell', options: ['bash', 'zsh', 'fish']}]},
    ])
    expect(script.split('\n')).toEqual([
      '# fish completion for podctl; install: podctl completion fish > ~/.config/fish/completions/podctl.fish',
      'complete -c podctl -f',
      String.raw`complete -c podctl -n 'not __fish_seen_subcommand_from ps completion' -a ps -d 'List containers (crictl\'s ps)'`,
      "complete -c podctl -n 'not __fish_seen_subcommand_from ps completion' -a completion -d 'Completion.'",
      "complete -c podctl -n '__fish_seen_subcommand_from ps' -l output -s o -x -a 'table json' -d 'Output format.'",
      "complete -c podctl -n '__fish_seen_subcommand_from ps' -l color -d 'Colour.'",
      "complete -c podctl -n '__fish_seen_subcommand_from ps' -l no-color -d 'Colour.'",
      "complete -c podctl -n '__fish_seen_subcommand_from ps' -l pod -s p -r -d 'Pod.'",
      "complete -c podctl -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'",
      '',
    ])
  })
})
