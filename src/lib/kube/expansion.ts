/**
 * `$(VAR)` references as the kubelet expands them in env values, command and args
 * (third_party/forked/golang/expansion): unknown references stay as written, `$$` is `$`.
 */
export function expandReferences(input: string, lookup: (name: string) => string | undefined): string {
  let out = ''
  let index = 0
  while (index < input.length) {
    const char = input[index]
    if (char !== '$' || index + 1 >= input.length) {
      out += char
      index++
      continue
    }

    const next = input[index + 1]
    if (next === '$') {
      out += '$'
      index += 2
    } else if (next === '(') {
      const close = input.indexOf(')', index + 2)
      if (close === -1) {
        out += '$('
        index += 2
      } else {
        const name = input.slice(index + 2, close)
        out += lookup(name) ?? `$(${name})`
        index = close + 1
      }
    } else {
      out += `$${next}`
      index += 2
    }
  }

  return out
}
