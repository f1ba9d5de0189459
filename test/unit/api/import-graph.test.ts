import {existsSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'

/**
 * `import {connect} from 'podctl'` must not load the CLI: every module the API can reach (static imports,
 * re-exports and import() alike; type-only imports are erased) is walked from src/lib/api/index.ts.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
const ENTRY = join(ROOT, 'src/lib/api/index.ts')
const CLI_PACKAGES = ['@oclif/core', 'chalk', 'cli-table3', 'ora']
const CLI_FILES = [/^src\/commands\//, /^src\/lib\/output\//, /^src\/lib\/base-command\.ts$/, /^src\/lib\/flags\.ts$/]

function runtimeSpecifiers(path: string): string[] {
  const ast = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const bindings = clause?.namedBindings
      const onlyTypes =
        clause?.isTypeOnly ||
        (clause !== undefined &&
          clause.name === undefined &&
          bindings !== undefined &&
          ts.isNamedImports(bindings) &&
          bindings.elements.length > 0 &&
          bindings.elements.every((element) => element.isTypeOnly))
      if (!onlyTypes) found.push(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push(node.moduleSpecifier.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments
      found.push(argument && ts.isStringLiteralLike(argument) ? argument.text : '<computed>')
    }

    ts.forEachChild(node, visit)
  }

  visit(ast)
  return found
}

/** Every source file and package the API can load. */
function reachable(): {files: string[]; packages: Set<string>} {
  const files = new Set<string>()
  const packages = new Set<string>()
  const queue = [ENTRY]
  while (queue.length > 0) {
    const path = queue.pop()!
    if (files.has(path)) continue
    files.add(path)
    for (const specifier of runtimeSpecifiers(path)) {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(path), specifier).replace(/\.js$/, '.ts')
        if (!existsSync(target)) throw new Error(`${relative(ROOT, path)}: cannot resolve ${specifier}`)
        queue.push(target)
      } else if (!specifier.startsWith('node:')) {
        packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0])
      }
    }
  }

  return {files: [...files].map((file) => relative(ROOT, file).split('\\').join('/')), packages}
}

describe('the library API', () => {
  const {files, packages} = reachable()

  it('walks the modules behind it', () => {
    expect(files).toContain('src/lib/kubelet/run/run-pods.ts')
    expect(packages).toContain('@grpc/grpc-js')
  })

  it('loads none of the CLI-only packages (oclif, chalk, cli-table3, ora)', () => {
    expect(CLI_PACKAGES.filter((name) => packages.has(name))).toEqual([])
  })

  it('loads no command, renderer or command infrastructure', () => {
    expect(files.filter((file) => CLI_FILES.some((pattern) => pattern.test(file)))).toEqual([])
  })

  it('imports no computed path', () => {
    expect(files.filter((file) => runtimeSpecifiers(join(ROOT, file)).includes('<computed>'))).toEqual([])
  })
})
