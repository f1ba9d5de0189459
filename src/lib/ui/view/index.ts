/**
 * The Ink view of `podctl ui`: it paints the lines the session composes (screen-lines.ts) and turns
 * key presses into KeyNames for the state machine. Nothing else lives here, so this module and Ink
 * with React are all the separate UI bundle holds (scripts/bundle/ui-bundle.mjs), loaded only by
 * `podctl ui`.
 */
import {Box, render, Text, useInput} from 'ink'
import {createElement as h, useSyncExternalStore} from 'react'

import type {KeyName} from '../keys.js'
import type {Line} from '../screen-lines.js'

/** What the session gives the view: the lines to show now, a change signal, and where keys go. */
export interface ViewStore {
  lines(): Line[]
  subscribe(listener: () => void): () => void
  press(key: KeyName): void
}

export interface ViewIo {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  color: boolean
}

export interface MountedView {
  unmount(): void
}

const TONES: Record<NonNullable<Line['tone']>, {color?: string; bold?: boolean; dim?: boolean}> = {
  ok: {color: 'green'},
  busy: {color: 'yellow'},
  bad: {color: 'red'},
  done: {dim: true},
  title: {bold: true},
  heading: {bold: true},
  warn: {color: 'yellow'},
}

type InkKey = Parameters<Parameters<typeof useInput>[0]>[1]

/** Ink's key event as a KeyName (keys.ts). */
export function keyName(input: string, key: InkKey): KeyName | undefined {
  if (key.ctrl && input === 'c') return 'ctrl-c'
  const named: Array<[boolean, KeyName]> = [
    [key.upArrow, 'up'],
    [key.downArrow, 'down'],
    [key.pageUp, 'pageup'],
    [key.pageDown, 'pagedown'],
    [key.home, 'home'],
    [key.end, 'end'],
    [key.return, 'enter'],
    [key.escape, 'escape'],
    [key.backspace || key.delete, 'backspace'],
    [key.tab, 'tab'],
  ]
  const found = named.find(([pressed]) => pressed)
  if (found) return found[1]
  if (key.ctrl || key.meta || input === '') return undefined
  return input
}

/**
 * Keys that arrive together (typed fast over ssh, pasted) come as one input: each character is a key
 * of its own, a carriage return among them Enter.
 */
export function keyNames(input: string, key: InkKey): KeyName[] {
  const plain = !key.ctrl && !key.meta && !key.escape && input.length > 1
  if (!plain) {
    const name = keyName(input, key)
    return name === undefined ? [] : [name]
  }

  return [...input].map((char) => (char === '\r' || char === '\n' ? 'enter' : char))
}

function App({store, color}: {store: ViewStore; color: boolean}) {
  const lines = useSyncExternalStore(store.subscribe, store.lines)
  useInput((input, key) => {
    for (const name of keyNames(input, key)) store.press(name)
  })
  return h(
    Box,
    {flexDirection: 'column'},
    lines.map((line, index) => {
      const tone = color && line.tone ? TONES[line.tone] : {}
      // The selected row is inverse (not a colour, so also with NO_COLOR) and starts with ">".
      return h(Text, {key: index, wrap: 'truncate', inverse: line.selected, ...tone}, line.text)
    }),
  )
}

/** Shows the view on the terminal; keys go to the store until unmount(). */
export function mount(store: ViewStore, io: ViewIo): MountedView {
  const instance = render(h(App, {store, color: io.color}), {
    stdin: io.stdin,
    stdout: io.stdout,
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 20,
  })
  return {
    unmount() {
      instance.unmount()
      instance.cleanup()
    },
  }
}
